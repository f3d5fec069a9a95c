#include "faults/network/network_plane.h"

#include <arpa/inet.h>
#include <fmt/format.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <sys/mman.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <set>

#include "faults/fault.h"
#include "common/kernel/netns.h"

namespace chaosbench::faults {
namespace {

constexpr std::chrono::seconds kIptablesLimit{10};

}  // namespace

std::string iptables_restore(int netns_fd, const std::string& script) {
  // run_in_netns gives the child /dev/null as stdin, so the script goes through a file
  // the child reads: a memfd keeps it off the disk.
  int fd = ::memfd_create("chaosbench-iptables", 0);
  if (fd < 0) return "memfd_create failed";
  if (::write(fd, script.data(), script.size()) != static_cast<ssize_t>(script.size())) {
    ::close(fd);
    return "cannot write the iptables-restore script";
  }
  // The child inherits the memfd (no CLOEXEC) and reopens it from offset 0.
  const std::string path = fmt::format("/proc/self/fd/{}", fd);
  auto out = common::run_in_netns(netns_fd, {"iptables-restore", "-w", "--noflush", path}, kIptablesLimit);
  ::close(fd);
  if (out.exit_code == 0) return "";
  if (out.timed_out) return "iptables-restore timed out";
  return out.err.empty() ? fmt::format("iptables-restore exited with {}", out.exit_code) : out.err;
}

bool iptables_chain_exists(int netns_fd, const std::string& chain, const std::string& table) {
  return common::run_in_netns(netns_fd, {"iptables", "-w", "-t", table, "-n", "-L", chain}, kIptablesLimit).exit_code ==
         0;
}

namespace {

constexpr const char* kBridgeNf = "/proc/sys/net/bridge/bridge-nf-call-iptables";

// Sets the bridge namespace's bridge-nf-call-iptables (br_netfilter, per namespace since
// Linux 5.3) to `value`, returning the value it had in *old; "" or why not.
std::string set_bridge_nf(int bridge_fd, char value, char* old) {
  std::string err;
  common::in_netns(bridge_fd, [&] {
    // /proc/sys/net shows the namespace of the thread that opens it.
    int fd = ::open(kBridgeNf, O_RDWR | O_CLOEXEC);
    if (fd < 0) {
      err = fmt::format("no {} (the kernel needs br_netfilter for faults between bridged nodes)", kBridgeNf);
      return;
    }
    char was = '0';
    if (old && ::read(fd, &was, 1) == 1) *old = was;
    if (::pwrite(fd, &value, 1, 0) != 1) err = fmt::format("cannot write {}", kBridgeNf);
    ::close(fd);
  });
  return err;
}

}  // namespace

std::string remove_chain_script(const std::string& chain, const std::string& hook, const std::string& table) {
  return fmt::format("*{2}\n-D {1} -j {0}\n-F {0}\n-X {0}\nCOMMIT\n", chain, hook, table);
}

namespace {

// The iptables-restore input that makes `h`'s chain with `rules` and the jump to it first
// in its hook. `fresh` declares the chain with -N, which fails when one of that name
// exists, where ":chain" would take it over and flush it.
std::string chain_script(const NetworkPlane::ChainHandle& h, const std::vector<std::string>& rules, bool fresh) {
  std::string script =
      fresh ? fmt::format("*{}\n-N {}\n", h.table, h.chain) : fmt::format("*{}\n:{} - [0:0]\n", h.table, h.chain);
  for (const auto& r : rules) script += fmt::format("-A {} {}\n", h.chain, r);
  script += fmt::format("-I {} 1 -j {}\nCOMMIT\n", h.hook, h.chain);
  return script;
}

// `text` as the dotted quad inet_ntop writes, or "" when it is not an IPv4 address.
std::string canonical_ipv4(const std::string& text) {
  in_addr a{};
  char out[INET_ADDRSTRLEN];
  if (::inet_pton(AF_INET, text.c_str(), &a) != 1 || !::inet_ntop(AF_INET, &a, out, sizeof out)) return "";
  return out;
}

// "" when `interface` is in the namespace and carries `address`, else why not.
std::string check_host_interface(int netns_fd, const std::string& interface, const std::string& address) {
  bool present = false, carries = false;
  std::string err;
  common::in_netns(netns_fd, [&] {
    // getifaddrs asks over a netlink socket, which sees the thread's namespace.
    ifaddrs* all = nullptr;
    if (::getifaddrs(&all) != 0) {
      err = "cannot list the host's interfaces (getifaddrs)";
      return;
    }
    for (const ifaddrs* a = all; a != nullptr; a = a->ifa_next) {
      if (interface != a->ifa_name) continue;
      present = true;
      if (a->ifa_addr == nullptr || a->ifa_addr->sa_family != AF_INET) continue;
      char text[INET_ADDRSTRLEN];
      if (::inet_ntop(AF_INET, &reinterpret_cast<const sockaddr_in*>(a->ifa_addr)->sin_addr, text, sizeof text) &&
          address == text)
        carries = true;
    }
    ::freeifaddrs(all);
  });
  if (!err.empty()) return err;
  if (!present) return fmt::format("interface {} is not on this host", interface);
  if (!carries) return fmt::format("interface {} does not carry this host's job address {}", interface, address);
  return "";
}

}  // namespace

NetworkPlane::NetworkPlane(int bridge_netns_fd, std::vector<NetworkNode> nodes, std::string node_interface,
                           std::uint64_t seed)
    : bridge_fd_(bridge_netns_fd), nodes_(std::move(nodes)), node_interface_(std::move(node_interface)), seed_(seed) {
  // Bridged traffic skips iptables until a fault needs it: the kernel's default (1) would
  // send every packet between nodes through netfilter, and once a fault had made the
  // filter table there it would stay, so the recovery phase would pay a cost the
  // baseline did not. The run's own namespace; nothing to restore.
  set_bridge_nf(bridge_fd_, '0', nullptr);
}

NetworkPlane::NetworkPlane(HostMode, int netns_fd, std::vector<NetworkNode> nodes, std::string interface,
                           int local_node, std::uint64_t seed)
    : bridge_fd_(-1), local_node_(local_node), nodes_(std::move(nodes)), node_interface_(std::move(interface)),
      seed_(seed) {
  nodes_.at(static_cast<std::size_t>(local_node)).netns_fd = netns_fd;
}

std::unique_ptr<NetworkPlane> NetworkPlane::for_host(int netns_fd, std::string interface,
                                                     std::vector<std::string> node_addresses, int local_node,
                                                     std::uint64_t seed) {
  if (netns_fd < 0) throw FaultError("host network plane: no network namespace fd");
  if (interface.empty() || interface.size() >= IFNAMSIZ)
    throw FaultError(fmt::format("host network plane: \"{}\" is not an interface name", interface));
  if (local_node < 0 || local_node >= static_cast<int>(node_addresses.size()))
    throw FaultError(fmt::format("host network plane: node {} is not one of the job's {} hosts", local_node,
                                 node_addresses.size()));
  std::vector<NetworkNode> nodes;
  std::set<std::string> seen;
  for (const auto& a : node_addresses) {
    const std::string address = canonical_ipv4(a);
    if (address.empty()) throw FaultError(fmt::format("host network plane: \"{}\" is not an IPv4 address", a));
    if (!seen.insert(address).second)
      throw FaultError(fmt::format("host network plane: two of the job's hosts have address {}", address));
    nodes.push_back({-1, address, ""});
  }
  std::string why;
  try {
    why = check_host_interface(netns_fd, interface, nodes[static_cast<std::size_t>(local_node)].address);
  } catch (const std::exception& e) {
    why = fmt::format("cannot enter the host's network namespace: {}", e.what());
  }
  if (!why.empty()) throw FaultError(fmt::format("host network plane: {}", why));
  return std::unique_ptr<NetworkPlane>(
      new NetworkPlane(HostMode{}, netns_fd, std::move(nodes), std::move(interface), local_node, seed));
}

NetworkPlane::~NetworkPlane() = default;

std::string NetworkPlane::netns_id(int netns_fd) {
  struct stat st {};
  if (::fstat(netns_fd, &st) != 0) return "net:[?]";
  return fmt::format("net:[{}]", st.st_ino);
}

TcShaper& NetworkPlane::shaper(int netns_fd, const std::string& interface) {
  auto key = std::make_pair(netns_fd, interface);
  auto it = shapers_.find(key);
  if (it == shapers_.end()) it = shapers_.emplace(key, std::make_unique<TcShaper>(netns_fd, interface)).first;
  return *it->second;
}

NetworkPlane::ShapeHandle NetworkPlane::add_shape(int netns_fd, const std::string& interface, const ShapeRule& rule,
                                                  UndoLog& log) {
  auto key = std::make_pair(netns_fd, interface);
  try {
    TcShaper& s = shaper(netns_fd, interface);
    if (rule_counts_[key] == 0) {
      // The root does not exist yet: journal it before the shaper makes it.
      root_entries_[key] =
          log.record("tc_root", {{"netns", netns_id(netns_fd)},
                                 {"netns_cookie", std::to_string(common::netns_cookie(netns_fd))},
                                 {"interface", interface},
                                 {"handle", "1:"}});
    }
    int id = s.add(rule);
    ++rule_counts_[key];
    log_ = &log;
    return {netns_fd, interface, id};
  } catch (const std::exception& e) {
    if (rule_counts_[key] == 0 && root_entries_.count(key)) {
      log.done(root_entries_[key]);
      root_entries_.erase(key);
    }
    throw FaultError(fmt::format("traffic control on {}: {}", interface, e.what()));
  }
}

void NetworkPlane::remove_shape(const ShapeHandle& handle) {
  if (handle.id == 0) return;
  auto key = std::make_pair(handle.netns_fd, handle.interface);
  auto it = shapers_.find(key);
  if (it == shapers_.end()) return;
  try {
    it->second->remove(handle.id);
  } catch (const std::exception& e) {
    throw FaultError(fmt::format("traffic control on {}: {}", handle.interface, e.what()));
  }
  if (rule_counts_[key] > 0 && --rule_counts_[key] == 0 && it->second->root_handle().empty()) {
    if (log_ && root_entries_.count(key)) log_->done(root_entries_[key]);
    root_entries_.erase(key);
  }
}


std::string NetworkPlane::match(int sender, int receiver) const {
  std::string m;
  if (sender >= 0) m += fmt::format("-s {}", node(sender).address);
  if (receiver >= 0) m += fmt::format("{}-d {}", m.empty() ? "" : " ", node(receiver).address);
  return m;
}

NetworkPlane::ChainHandle NetworkPlane::journal_chain(int netns_fd, const char* table, const char* hook,
                                                      UndoLog& log) {
  ChainHandle h{netns_fd, fmt::format("chaosbench{}", next_chain_++), hook, 0, table};
  std::map<std::string, std::string> fields{{"netns", netns_id(h.netns_fd)},
                                            {"netns_cookie", std::to_string(common::netns_cookie(h.netns_fd))},
                                            {"chain", h.chain},
                                            {"hook", h.hook}};
  // Only where it is not filter: the entries of the filter table stay as they were, and
  // the journals of older versions (no table) read as filter.
  if (h.table != "filter") fields["table"] = h.table;
  h.entry = log.record("iptables_chain", std::move(fields));
  return h;
}

NetworkPlane::ChainHandle NetworkPlane::add_bridge_chain(const std::vector<std::string>& rules, UndoLog& log) {
  ChainHandle h = journal_chain(bridge_fd_, "filter", "FORWARD", log);
  // iptables-restore applies a table's changes as one transaction: all or nothing.
  std::string err = iptables_restore(h.netns_fd, chain_script(h, rules, false));
  if (err.empty() && bridge_chains_ == 0) {
    err = set_bridge_nf(bridge_fd_, '1', nullptr);
    if (!err.empty()) iptables_restore(h.netns_fd, remove_chain_script(h.chain, h.hook));
  }
  if (!err.empty()) {
    log.done(h.entry);
    throw FaultError(fmt::format("iptables: {}", err));
  }
  ++bridge_chains_;
  log_ = &log;
  return h;
}

NetworkPlane::ChainHandle NetworkPlane::add_host_chain(const std::vector<std::string>& rules, UndoLog& log) {
  return add_fresh_host_chain("filter", "OUTPUT", rules, log);
}

NetworkPlane::ChainHandle NetworkPlane::add_host_input_chain(const std::vector<std::string>& rules, UndoLog& log) {
  return add_fresh_host_chain("mangle", "INPUT", rules, log);
}

NetworkPlane::ChainHandle NetworkPlane::add_fresh_host_chain(const char* table, const char* hook,
                                                             const std::vector<std::string>& rules, UndoLog& log) {
  if (!host_mode()) throw FaultError("a host chain needs a plane in host mode");
  // A few names at most: a taken one is a chain a crashed run left for cleanup.
  constexpr int kNameTries = 16;
  for (int attempt = 1;; ++attempt) {
    ChainHandle h = journal_chain(node(local_node_).netns_fd, table, hook, log);
    const std::string err = iptables_restore(h.netns_fd, chain_script(h, rules, true));
    if (err.empty()) {
      log_ = &log;
      return h;
    }
    log.done(h.entry);
    if (attempt < kNameTries && iptables_chain_exists(h.netns_fd, h.chain, h.table)) continue;
    throw FaultError(fmt::format("iptables: {}", err));
  }
}

NetworkPlane::ShapeHandle NetworkPlane::add_host_shape(int receiver, ShapeRule rule, UndoLog& log) {
  if (!host_mode()) throw FaultError("a host rule needs a plane in host mode");
  if (receiver < 0 || receiver >= nodes() || receiver == local_node_)
    throw FaultError(fmt::format("node {} is not a peer of this host (node {} of {})", receiver, local_node_, nodes()));
  rule.match_src = node(local_node_).address;
  rule.match_dst = node(receiver).address;
  return add_shape(node(local_node_).netns_fd, node_interface_, rule, log);
}

void NetworkPlane::remove_chain(ChainHandle& handle) {
  if (handle.chain.empty()) return;
  std::string err = iptables_restore(handle.netns_fd, remove_chain_script(handle.chain, handle.hook, handle.table));
  if (!err.empty() && iptables_chain_exists(handle.netns_fd, handle.chain, handle.table))
    throw FaultError(fmt::format("iptables: removing chain {}: {}", handle.chain, err));
  if (log_) log_->done(handle.entry);
  handle.chain.clear();
  // Off again with the last chain; best effort: it is the run's own namespace.
  if (handle.netns_fd == bridge_fd_ && --bridge_chains_ == 0) set_bridge_nf(bridge_fd_, '0', nullptr);
}

}  // namespace chaosbench::faults
