// One ordered pair's probes in the link mesh (link_mesh.h): the probes still waiting for
// their echo, the round trips of the current window, and the loss of each window once
// every probe sent in it has had its timeout. Pure: times are given (nanoseconds on
// CLOCK_REALTIME), so tests drive it without sockets.
// Threads: one (the mesh's).
#pragma once

#include <cstdint>
#include <deque>
#include <optional>
#include <vector>

namespace chaosbench::harness {

class MeshWindow {
 public:
  static constexpr std::int64_t kMaxRoundTripNs = 10'000'000'000;  // past the timeout: never a round trip
  static constexpr std::size_t kMaxRoundTrips = 4096;              // per window
  struct Loss {
    std::int64_t window = 0;  // index: sent_ns / window_ns
    int sent = 0;
    int lost = 0;
  };

  // The sequence number of a probe sent now, in window `window` (sent_ns / window_ns).
  std::uint32_t sent(std::int64_t sent_ns, std::int64_t window);
  // An echo of waiting probe `seq` that arrived at `rx_ns`, held `held_ns` by the
  // reflector: its round trip (rx_ns less the probe's own send time, less the hold) joins
  // this window's median and is returned. Nothing for an echo of a probe no longer
  // waiting (settled as lost, or never sent), a duplicate, or one whose hold time is not
  // within its round trip: a forged or garbled echo changes nothing.
  std::optional<std::int64_t> answered(std::uint32_t seq, std::int64_t rx_ns, std::int64_t held_ns);
  // The median round trip (ms) of this window's echoes, and starts the next window;
  // nothing when no echo came.
  std::optional<double> take_rtt_ms();
  // Settles the probes sent before `now_ns - timeout_ns`; returns the windows all of
  // whose probes are now settled (oldest first). With `all`, settles every probe.
  std::vector<Loss> settle(std::int64_t now_ns, std::int64_t timeout_ns, bool all = false);
  std::size_t waiting() const { return probes_.size(); }

 private:
  struct Probe {
    std::uint32_t seq = 0;
    std::int64_t sent_ns = 0;
    std::int64_t window = 0;
    bool answered = false;
  };
  std::deque<Probe> probes_;  // in seq order
  std::uint32_t next_seq_ = 0;
  std::vector<double> rtts_ms_;
  std::optional<Loss> open_;  // the oldest window being settled
};

}  // namespace chaosbench::harness
