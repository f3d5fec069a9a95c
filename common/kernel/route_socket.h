// A route netlink socket (libnl) made inside a network namespace, where it stays bound,
// keeping the text of the kernel's extended ACK for the last failed request so errors
// say why ("Exclusivity flag on, cannot modify"). The virtual cluster and the tc shaper
// both talk to the kernel through it.
// Threads: one socket per thread at a time; opening it switches the calling thread into
// the namespace briefly.
#pragma once

#include <functional>
#include <netlink/netlink.h>
#include <string>

namespace chaosbench::common {

class RouteSocket {
 public:
  // netns_fd -1: the calling thread's namespace. Throws std::runtime_error.
  explicit RouteSocket(int netns_fd);
  ~RouteSocket();
  RouteSocket(const RouteSocket&) = delete;
  RouteSocket& operator=(const RouteSocket&) = delete;

  nl_sock* get() const { return sk_; }

  // Sends one request and waits for its ACK; libnl's code (0 or -NLE_*). The kernel
  // replays its own module loads, but a request racing one can still see EAGAIN: retry.
  int call(const std::function<int(nl_sock*)>& request);

  // "Object exists (kernel: Exclusivity flag on, cannot modify)"
  std::string describe(int rc) const;

 private:
  static int on_error(sockaddr_nl*, nlmsgerr* err, void* arg);

  nl_sock* sk_ = nullptr;
  std::string kernel_message_;
};

}  // namespace chaosbench::common
