#include "faults/network_plane.h"

#include <fmt/format.h>
#include <sys/mman.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "faults/fault.h"
#include "common/netns.h"

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

bool iptables_chain_exists(int netns_fd, const std::string& chain) {
  return common::run_in_netns(netns_fd, {"iptables", "-w", "-n", "-L", chain}, kIptablesLimit).exit_code == 0;
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

std::string remove_chain_script(const std::string& chain, const std::string& hook) {
  return fmt::format("*filter\n-D {1} -j {0}\n-F {0}\n-X {0}\nCOMMIT\n", chain, hook);
}

NetworkPlane::NetworkPlane(int bridge_netns_fd, std::vector<NetworkNode> nodes, std::string node_interface,
                           std::uint64_t seed)
    : bridge_fd_(bridge_netns_fd), nodes_(std::move(nodes)), node_interface_(std::move(node_interface)), seed_(seed) {
  // Bridged traffic skips iptables until a fault needs it: the kernel's default (1) would
  // send every packet between nodes through netfilter, and once a fault had made the
  // filter table there it would stay, so the recovery phase would pay a cost the
  // baseline did not. The run's own namespace; nothing to restore.
  set_bridge_nf(bridge_fd_, '0', nullptr);
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

NetworkPlane::ChainHandle NetworkPlane::add_bridge_chain(const std::vector<std::string>& rules, UndoLog& log) {
  ChainHandle h{bridge_fd_, fmt::format("chaosbench{}", next_chain_++), "FORWARD", 0};
  h.entry = log.record("iptables_chain", {{"netns", netns_id(h.netns_fd)},
                                          {"netns_cookie", std::to_string(common::netns_cookie(h.netns_fd))},
                                          {"chain", h.chain},
                                          {"hook", h.hook}});
  std::string script = fmt::format("*filter\n:{} - [0:0]\n", h.chain);
  for (const auto& r : rules) script += fmt::format("-A {} {}\n", h.chain, r);
  script += fmt::format("-I {} 1 -j {}\nCOMMIT\n", h.hook, h.chain);
  // iptables-restore applies a table's changes as one transaction: all or nothing.
  std::string err = iptables_restore(h.netns_fd, script);
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

void NetworkPlane::remove_chain(ChainHandle& handle) {
  if (handle.chain.empty()) return;
  std::string err = iptables_restore(handle.netns_fd, remove_chain_script(handle.chain, handle.hook));
  if (!err.empty() && iptables_chain_exists(handle.netns_fd, handle.chain))
    throw FaultError(fmt::format("iptables: removing chain {}: {}", handle.chain, err));
  if (log_) log_->done(handle.entry);
  handle.chain.clear();
  // Off again with the last chain; best effort: it is the run's own namespace.
  if (--bridge_chains_ == 0) set_bridge_nf(bridge_fd_, '0', nullptr);
}

}  // namespace chaosbench::faults
