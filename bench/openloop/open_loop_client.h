// What a load generator gives the open-loop engine (open_loop_engine.h) besides its
// requests: its arrival process (which requests fall due, and when the next one does) and
// its housekeeping (metric windows). The generator keeps its protocol; the engine keeps
// the sockets, the clock and the endpoints. Called on the engine's loop thread only.
#pragma once

#include <chrono>

namespace chaosbench::bench::openloop {

class OpenLoopEngine;

class OpenLoopClient {
 public:
  using Clock = std::chrono::steady_clock;

  virtual ~OpenLoopClient() = default;

  // Each turn of the loop while the run issues: submits the requests due by `now`
  // (engine.submit, each with its scheduled time), and returns when the next one falls
  // due, which the engine wakes for on a timer; Clock::time_point::max() when none is
  // timed (a closed loop, whose requests start as others end: every turn looks again).
  // An arrival process returns its next arrival even past the end of issuing, so the
  // engine wakes by then to end issuing, not up to a housekeeping wait later.
  virtual Clock::time_point issue(OpenLoopEngine& engine, Clock::time_point now) = 0;
  // Each turn, issuing or draining: cheap housekeeping.
  virtual void tick(Clock::time_point now) { (void)now; }
};

}  // namespace chaosbench::bench::openloop
