// A signal disposition for the lifetime of an object, the previous one restored after.
// Process-wide, as dispositions are. Workloads use it for:
//   SIGPIPE ignored while talking to peers: gloo's TCP transport writes with writev(2), so
//   a write to a peer that just died raises SIGPIPE, whose default action kills the rank
//   before gloo can turn EPIPE into an IoException;
//   SIGTERM caught by the trainer, to stop at a step boundary.
#pragma once

#include <csignal>

namespace chaosbench::bench {

class ScopedSignal {
 public:
  // handler: a function, SIG_IGN or SIG_DFL.
  ScopedSignal(int sig, void (*handler)(int)) : sig_(sig) {
    struct sigaction action {};
    action.sa_handler = handler;
    sigemptyset(&action.sa_mask);
    installed_ = ::sigaction(sig, &action, &previous_) == 0;
  }
  ~ScopedSignal() {
    if (installed_) ::sigaction(sig_, &previous_, nullptr);
  }
  ScopedSignal(const ScopedSignal&) = delete;
  ScopedSignal& operator=(const ScopedSignal&) = delete;

 private:
  int sig_;
  struct sigaction previous_ {};
  bool installed_ = false;
};

}  // namespace chaosbench::bench
