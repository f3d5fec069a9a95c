// gloo's TCP transport writes with writev(2), so a write to a peer that just died raises
// SIGPIPE, whose default action kills the rank before gloo can turn EPIPE into an
// IoException. A workload holds one of these while it talks to peers, so a dead peer is
// an error it can handle; the previous disposition comes back after. Process-wide.
#pragma once

#include <csignal>

namespace chaosbench::bench {

class IgnoreSigpipe {
 public:
  IgnoreSigpipe() {
    struct sigaction ignore {};
    ignore.sa_handler = SIG_IGN;
    sigemptyset(&ignore.sa_mask);
    installed_ = ::sigaction(SIGPIPE, &ignore, &previous_) == 0;
  }
  ~IgnoreSigpipe() {
    if (installed_) ::sigaction(SIGPIPE, &previous_, nullptr);
  }
  IgnoreSigpipe(const IgnoreSigpipe&) = delete;
  IgnoreSigpipe& operator=(const IgnoreSigpipe&) = delete;

 private:
  struct sigaction previous_ {};
  bool installed_ = false;
};

}  // namespace chaosbench::bench
