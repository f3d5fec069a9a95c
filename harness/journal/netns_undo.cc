#include "harness/journal/netns_undo.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <stdexcept>
#include <thread>
#include <unistd.h>

#include "common/kernel/netns.h"
#include "faults/network/network_plane.h"
#include "harness/journal/process_identity.h"

namespace chaosbench::harness {
namespace {

// An open fd of the journaled namespace, through any process still in it: its inode
// ("net:[inode]") must match, and its cookie too, since a freed namespace's inode number
// is handed out again. -1 when no process is in it (the namespace is gone), or when the
// entry has no cookie to be sure by (then it is not touched).
int find_netns(const JournalEntry& e) {
  const auto& id = e.fields.at("netns");
  const auto cookie_field = e.fields.find("netns_cookie");
  const std::uint64_t cookie = cookie_field == e.fields.end() ? 0 : std::stoull(cookie_field->second);
  if (cookie == 0) return -1;
  for (const auto& p : list_processes()) {
    const std::string link = fmt::format("/proc/{}/ns/net", p.pid);
    char buf[64];
    ssize_t n = ::readlink(link.c_str(), buf, sizeof buf);
    if (n <= 0 || std::string(buf, static_cast<std::size_t>(n)) != id) continue;
    int fd = ::open(link.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) continue;
    if (common::netns_cookie(fd) == cookie) return fd;
    ::close(fd);
    return -1;  // the same inode number, another namespace: ours is gone
  }
  return -1;
}

bool gone_device(const std::string& tc_err) {
  return tc_err.find("Cannot find device") != std::string::npos;
}

struct Fd {
  int fd;
  ~Fd() {
    if (fd >= 0) ::close(fd);
  }
};

}  // namespace

std::string undo_tc_root(const JournalEntry& e, bool dry_run) {
  const auto& id = e.fields.at("netns");
  const auto& iface = e.fields.at("interface");
  const auto& handle = e.fields.at("handle");
  Fd ns{find_netns(e)};
  if (ns.fd < 0) return fmt::format("qdisc {} on {} in {}: the namespace is gone, and the qdisc with it", handle, iface, id);
  if (dry_run) return fmt::format("would delete qdisc {} (root) of {} in {}", handle, iface, id);
  // The interface can be going while we look: when the bridge's namespace dies with the
  // harness, the kernel tears down each veth pair asynchronously, and for a moment the
  // device is there without its qdisc (the delete says "Invalid handle") or no longer
  // there at all. Either way the qdisc is gone; anything else is retried, then reported.
  std::string last_err;
  for (int attempt = 0; attempt < 3; ++attempt) {
    if (attempt > 0) std::this_thread::sleep_for(std::chrono::milliseconds(200));
    auto out = common::run_in_netns(ns.fd, {"tc", "qdisc", "del", "dev", iface, "root", "handle", handle},
                                    std::chrono::seconds(10));
    if (out.exit_code == 0) return fmt::format("deleted qdisc {} of {} in {}", handle, iface, id);
    auto show = common::run_in_netns(ns.fd, {"tc", "qdisc", "show", "dev", iface, "root"}, std::chrono::seconds(10));
    if (gone_device(out.err) || gone_device(show.err))
      return fmt::format("qdisc {} on {} in {}: the interface is gone (its veth peer's namespace went), and the qdisc "
                         "with it", handle, iface, id);
    if (show.exit_code == 0 && show.out.find("qdisc htb " + handle) == std::string::npos)
      return fmt::format("qdisc {} on {} in {}: already gone", handle, iface, id);
    last_err = fmt::format("{} (tc qdisc show: exit {}, {}{})", out.err, show.exit_code, show.out, show.err);
  }
  throw std::runtime_error(fmt::format("cannot delete qdisc {} of {} in {}: {}", handle, iface, id, last_err));
}

std::string undo_iptables_chain(const JournalEntry& e, bool dry_run) {
  const auto& id = e.fields.at("netns");
  const auto& chain = e.fields.at("chain");
  const auto hook = e.fields.count("hook") ? e.fields.at("hook") : std::string("INPUT");
  // No table: an entry of the filter table (the only one before host mode's delay line).
  const auto table = e.fields.count("table") ? e.fields.at("table") : std::string("filter");
  const std::string where = table == "filter" ? hook : fmt::format("{} {}", table, hook);
  Fd ns{find_netns(e)};
  if (ns.fd < 0) return fmt::format("iptables chain {} in {}: the namespace is gone, and the chain with it", chain, id);
  if (!faults::iptables_chain_exists(ns.fd, chain, table))
    return fmt::format("iptables chain {} in {}: already gone", chain, id);
  if (dry_run) return fmt::format("would remove iptables chain {} (and the {} jump to it) in {}", chain, where, id);
  std::string err = faults::iptables_restore(ns.fd, faults::remove_chain_script(chain, hook, table));
  if (!err.empty()) throw std::runtime_error(fmt::format("cannot remove iptables chain {} in {}: {}", chain, id, err));
  return fmt::format("removed iptables chain {} in {}", chain, id);
}

}  // namespace chaosbench::harness
