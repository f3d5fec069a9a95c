// The clock offset between the controller and one agent's host, estimated from NTP-style
// exchanges (RFC 5905 section 8): the controller sends at t0 (its clock), the agent
// receives at t1 and answers at t2 (its clock), the controller receives at t3. Then
//   offset = ((t1 - t0) + (t2 - t3)) / 2   (agent clock minus controller clock)
//   rtt    = (t3 - t0) - (t2 - t1)
// and the true offset lies within offset ± rtt/2 whatever the asymmetry of the two
// directions. Queueing only lengthens a round trip, so the exchange with the smallest
// round trip among the recent ones (a minimum-RTT filter, as NTP's clock filter) gives the
// tightest bound. The window keeps the estimate following a clock that drifts during a
// run. Pure logic: no sockets, no clocks, so it is tested with injected offsets.
// Threads: one owner; not thread-safe.
#pragma once

#include <cstddef>
#include <deque>
#include <optional>

namespace chaosbench::harness {

// One exchange, in seconds: t0 and t3 on the controller's clock, t1 and t2 on the agent's.
struct ClockExchange {
  double sent = 0;            // t0
  double agent_received = 0;  // t1
  double agent_sent = 0;      // t2
  double received = 0;        // t3
};

struct ClockEstimate {
  double offset_s = 0;       // agent clock minus controller clock
  double uncertainty_s = 0;  // the true offset is within offset_s ± this (rtt / 2)
  double rtt_s = 0;          // the round trip of the exchange it comes from
  std::size_t samples = 0;   // exchanges in the window
};

class ClockOffsetEstimator {
 public:
  // Keeps the last `window` exchanges (at least 1).
  explicit ClockOffsetEstimator(std::size_t window = 32);

  // Adds an exchange. Returns false, and keeps nothing, for one that cannot be: a negative
  // round trip, the agent answering before it received, or a non-finite time.
  bool add(const ClockExchange& e);

  // The estimate from the exchange with the smallest round trip in the window; nullopt
  // before any exchange.
  std::optional<ClockEstimate> estimate() const;

  // `agent_time` (the agent's clock) on the controller's clock, by the current estimate;
  // unchanged before any exchange.
  double to_controller(double agent_time) const;

 private:
  struct Sample {
    double offset;
    double rtt;
  };
  std::size_t window_;
  std::deque<Sample> samples_;
};

}  // namespace chaosbench::harness
