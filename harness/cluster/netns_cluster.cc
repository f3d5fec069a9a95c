#include "harness/cluster/netns_cluster.h"

#include <fmt/format.h>
#include <functional>
#include <memory>
#include <net/if.h>
#include <netlink/netlink.h>
#include <netlink/route/addr.h>
#include <netlink/route/link.h>
#include <netlink/route/link/veth.h>
#include <sys/stat.h>
#include <stdexcept>
#include <system_error>
#include <unistd.h>

#include "common/kernel/netns.h"
#include "common/kernel/route_socket.h"
#include "harness/core/host_error.h"

namespace chaosbench::harness {
namespace {

// common::new_netns with the reason as a host error (exit 3).
int new_netns() {
  try {
    return common::new_netns();
  } catch (const std::system_error& e) {
    throw HostError(fmt::format("{} (needs root or CAP_SYS_ADMIN)", e.what()));
  }
}

// A route netlink socket in the namespace, a host error when it cannot be made.
struct RouteSocket {
  std::unique_ptr<common::RouteSocket> sock;
  nl_sock* sk = nullptr;
  explicit RouteSocket(int netns_fd) {
    try {
      sock = std::make_unique<common::RouteSocket>(netns_fd);
    } catch (const std::exception& e) {
      throw HostError(e.what());
    }
    sk = sock->get();
  }
};

void check(int rc, const std::string& what) {
  if (rc < 0) throw HostError(fmt::format("{}: {}", what, nl_geterror(rc)));
}

struct LinkPtr {
  rtnl_link* p;
  explicit LinkPtr(rtnl_link* l) : p(l) {
    if (!p) throw HostError("out of memory (rtnl_link)");
  }
  ~LinkPtr() { rtnl_link_put(p); }
  LinkPtr(const LinkPtr&) = delete;
  LinkPtr& operator=(const LinkPtr&) = delete;
};

// ip link set NAME [master M] up
void set_up(nl_sock* sk, const std::string& name, int master = 0) {
  rtnl_link* raw = nullptr;
  check(rtnl_link_get_kernel(sk, 0, name.c_str(), &raw), "find link " + name);
  LinkPtr link(raw);
  LinkPtr change(rtnl_link_alloc());
  if (master > 0) rtnl_link_set_master(change.p, master);
  rtnl_link_set_flags(change.p, IFF_UP);
  check(rtnl_link_change(sk, link.p, change.p, 0), "bring up " + name);
}

int ifindex(nl_sock* sk, const std::string& name) {
  rtnl_link* raw = nullptr;
  check(rtnl_link_get_kernel(sk, 0, name.c_str(), &raw), "find link " + name);
  LinkPtr link(raw);
  return rtnl_link_get_ifindex(link.p);
}

}  // namespace

void NetnsCluster::in_netns(int netns_fd, const std::function<void()>& fn) {
  try {
    common::in_netns(netns_fd, fn);
  } catch (const std::system_error& e) {
    throw HostError(fmt::format("{} (needs root or CAP_SYS_ADMIN)", e.what()));
  }
}

NetnsCluster::NetnsCluster(int nodes, const std::string& run_id) {
  if (nodes < 1 || nodes > 64) throw std::invalid_argument("1 to 64 nodes");
  // 10.<a>.<b>.0/24 from the run id: each run is its own L2 domain anyway; distinct
  // subnets keep two runs apart should they ever be bridged, and make logs unambiguous.
  std::size_t h = std::hash<std::string>{}(run_id);
  const int a = 64 + static_cast<int>(h % 128), b = static_cast<int>((h >> 8) % 256);
  try {
    bridge_fd_ = new_netns();
    RouteSocket bridge_sk(bridge_fd_);
    {
      // ip link add br0 type bridge; ip link set br0 up   (in the bridge namespace)
      LinkPtr br(rtnl_link_alloc());
      check(rtnl_link_set_type(br.p, "bridge"), "bridge type");
      rtnl_link_set_name(br.p, "br0");
      check(rtnl_link_add(bridge_sk.sk, br.p, NLM_F_CREATE | NLM_F_EXCL), "create bridge br0");
      set_up(bridge_sk.sk, "br0");
      set_up(bridge_sk.sk, "lo");
    }
    const int br_index = ifindex(bridge_sk.sk, "br0");
    for (int n = 0; n < nodes; ++n) {
      int fd = new_netns();
      node_fds_.push_back(fd);
      const std::string host_side = bridge_port(n);
      // ip link add nN type veth peer name eth0 netns <node>   (in the bridge namespace)
      LinkPtr veth(rtnl_link_veth_alloc());
      rtnl_link_set_name(veth.p, host_side.c_str());
      rtnl_link* peer = rtnl_link_veth_get_peer(veth.p);
      rtnl_link_set_name(peer, kNodeInterface);
      rtnl_link_set_ns_fd(peer, fd);
      rtnl_link_put(peer);
      check(rtnl_link_add(bridge_sk.sk, veth.p, NLM_F_CREATE | NLM_F_EXCL), "create veth " + host_side);
      set_up(bridge_sk.sk, host_side, br_index);
      // In the node: ip addr add 10.a.b.(n+1)/24 dev eth0; ip link set eth0 up; lo up
      RouteSocket node_sk(fd);
      const std::string addr = fmt::format("10.{}.{}.{}", a, b, n + 1);
      nl_addr* local = nullptr;
      check(nl_addr_parse((addr + "/24").c_str(), AF_INET, &local), "parse " + addr);
      rtnl_addr* ra = rtnl_addr_alloc();
      rtnl_addr_set_ifindex(ra, ifindex(node_sk.sk, kNodeInterface));
      rtnl_addr_set_local(ra, local);
      int rc = rtnl_addr_add(node_sk.sk, ra, 0);
      rtnl_addr_put(ra);
      nl_addr_put(local);
      check(rc, "add address " + addr);
      set_up(node_sk.sk, kNodeInterface);
      set_up(node_sk.sk, "lo");
      addrs_.push_back(addr);
    }
  } catch (...) {
    for (int fd : node_fds_) ::close(fd);
    if (bridge_fd_ >= 0) ::close(bridge_fd_);
    throw;
  }
}

std::string NetnsCluster::bridge_port(int node) { return fmt::format("n{}", node); }

std::vector<std::string> NetnsCluster::namespace_ids() const {
  std::vector<std::string> out;
  auto id = [](int fd) {
    struct stat st {};
    ::fstat(fd, &st);
    return fmt::format("net:[{}]", st.st_ino);
  };
  out.push_back(id(bridge_fd_));
  for (int fd : node_fds_) out.push_back(id(fd));
  return out;
}

NetnsCluster::~NetnsCluster() {
  for (int fd : node_fds_) ::close(fd);
  if (bridge_fd_ >= 0) ::close(bridge_fd_);
}

}  // namespace chaosbench::harness
