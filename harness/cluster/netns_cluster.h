// The virtual cluster: one network namespace per node, joined by a bridge in a namespace
// of its own (nothing is added to the host's namespace), one veth pair per node, loopback
// up, an address per node. Built through netlink with libnl, never by running `ip`.
//
// Namespaces are held by file descriptors, not bind mounts under /run/netns: when the
// harness and the processes in them are gone, the kernel frees them with their links, so
// a crash can leave nothing network-side behind (the processes are journaled).
// Every run has its own bridge namespace, so two runs' addresses can never meet.
// Threads: build and use from one thread (it switches that thread's namespace briefly).
#pragma once

#include <functional>
#include <string>
#include <vector>

namespace chaosbench::harness {

class NetnsCluster {
 public:
  // Builds `nodes` node namespaces (1..64) on subnet 10.<a>.<b>.0/24 (a, b from the run
  // id). Throws HostError when namespaces cannot be made (no root / CAP_NET_ADMIN).
  NetnsCluster(int nodes, const std::string& run_id);
  ~NetnsCluster();  // closes every namespace fd: the kernel removes the rest
  NetnsCluster(const NetnsCluster&) = delete;
  NetnsCluster& operator=(const NetnsCluster&) = delete;

  int nodes() const { return static_cast<int>(node_fds_.size()); }
  int node_netns_fd(int node) const { return node_fds_.at(static_cast<std::size_t>(node)); }
  int bridge_netns_fd() const { return bridge_fd_; }
  const std::string& address(int node) const { return addrs_.at(static_cast<std::size_t>(node)); }
  static constexpr const char* kNodeInterface = "eth0";
  // The node's veth peer in the bridge namespace: its egress is the node's ingress.
  static std::string bridge_port(int node);  // "n<node>"
  // "net:[4026532567]" for the bridge namespace and each node's: how /proc/PID/ns/net
  // names them, so a test (or a person) can check none is left after the run.
  std::vector<std::string> namespace_ids() const;

  // Runs `fn` with the calling thread inside `netns_fd`, then switches back (also when
  // `fn` throws). Sockets made inside stay bound to that namespace.
  static void in_netns(int netns_fd, const std::function<void()>& fn);

 private:
  int bridge_fd_ = -1;
  std::vector<int> node_fds_;
  std::vector<std::string> addrs_;
};

}  // namespace chaosbench::harness
