// SIGINT/SIGTERM during a run: the handler only records the signal; the runner's loop
// sees it, stops every process, reverts every fault and exits 130. The previous
// dispositions come back when the guard goes. One guard at a time (process-wide state).
#pragma once

#include <csignal>

namespace chaosbench::harness {

class SignalGuard {
 public:
  SignalGuard();   // installs handlers for SIGINT, SIGTERM, SIGHUP; ignores SIGPIPE
  ~SignalGuard();  // restores the previous handlers
  SignalGuard(const SignalGuard&) = delete;
  SignalGuard& operator=(const SignalGuard&) = delete;

  // The signal received, or 0.
  static int received();

 private:
  struct sigaction old_int_ {}, old_term_ {}, old_hup_ {}, old_pipe_ {};
};

}  // namespace chaosbench::harness
