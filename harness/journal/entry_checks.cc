#include "harness/journal/entry_checks.h"

#include <algorithm>
#include <array>
#include <climits>
#include <csignal>
#include <filesystem>
#include <fmt/format.h>
#include <linux/magic.h>
#include <regex>
#include <sys/vfs.h>

#include "common/gpu/fault_control.h"
#include "harness/journal/undo_kind.h"

namespace chaosbench::harness {
namespace {

namespace fs = std::filesystem;

std::string field(const JournalEntry& e, const char* name) {
  auto it = e.fields.find(name);
  return it == e.fields.end() ? std::string() : it->second;
}

// Digits only (no sign, no blanks: std::stoull would wrap "-5"), at most `max`.
bool decimal(const std::string& s, std::uint64_t max, std::uint64_t* out = nullptr) {
  if (s.empty() || s.size() > 19 || !std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; }))
    return false;
  const std::uint64_t v = std::stoull(s);
  if (out) *out = v;
  return v <= max;
}

bool matches(const std::string& s, const char* pattern) {
  return s.size() < 4096 && std::regex_match(s, std::regex(pattern));
}

// Absolute, without "." or ".." or empty components: what it names is what it says.
bool normal_absolute(const std::string& p) {
  return !p.empty() && p.size() < 4096 && p[0] == '/' && fs::path(p).lexically_normal().string() == p &&
         p.back() != '/' && p.find("/../") == std::string::npos && !p.ends_with("/..");
}

bool on_cgroup_fs(const std::string& path) {
  struct statfs s {};
  if (::statfs(path.c_str(), &s) != 0) return true;  // gone: undoing it does nothing
  return s.f_type == CGROUP_SUPER_MAGIC || s.f_type == CGROUP2_SUPER_MAGIC;
}

// The run's cgroup (.../chaosbench-<id>) or one the harness makes in it.
std::string check_cgroup_dir(const JournalFile& j, const std::string& p) {
  if (!normal_absolute(p) || !p.starts_with("/sys/fs/cgroup/"))
    return fmt::format("cgroup {} is not a plain path below /sys/fs/cgroup", p.substr(0, 200));
  const std::string own = "/chaosbench-" + j.run_id;
  const auto at = p.find(own + "/");
  const std::string rest = at == std::string::npos ? "" : p.substr(at + own.size());
  if (!p.ends_with(own) && !(at != std::string::npos && (rest == "/harness" || matches(rest, "/node[0-9]{1,6}"))))
    return fmt::format("{} is not run {}'s cgroup (.../chaosbench-{}[/harness|/nodeN])", p.substr(0, 200), j.run_id,
                       j.run_id);
  if (!on_cgroup_fs(p)) return fmt::format("{} is not on a cgroup file system", p);
  return "";
}

}  // namespace

std::string check_write(const JournalFile& j, const JournalEntry& e) {
  static const std::array<std::string, 7> knobs{"freezer.state", "cgroup.freeze", "cgroup.subtree_control",
                                                "cpu.cfs_quota_us", "cpu.max", "memory.limit_in_bytes",
                                                "memory.max"};
  const std::string p = field(e, "path");
  const fs::path path(p);
  const std::string file = path.filename().string(), dir = path.parent_path().string();
  if (!normal_absolute(p) || std::find(knobs.begin(), knobs.end(), file) == knobs.end())
    return fmt::format("{} is not a cgroup setting chaosbench changes", p.substr(0, 200));
  if (file == "cgroup.subtree_control") {
    // The cgroup that holds the run's: enabling controllers for it is journaled there.
    const std::string child = dir + "/chaosbench-" + j.run_id;
    for (const auto& other : j.pending)
      if (other.kind == to_string(UndoKind::kCgroup) && field(other, "path") == child) return on_cgroup_fs(dir) ? "" : dir + ": not a cgroup";
  }
  return check_cgroup_dir(j, dir);
}

std::string check_cgroup_move(const JournalFile& j, const JournalEntry& e) {
  std::uint64_t pid = 0, start = 0;
  if (!decimal(field(e, "pid"), INT_MAX, &pid) || !decimal(field(e, "start_time"), UINT64_MAX, &start) ||
      pid != static_cast<std::uint64_t>(j.pid) || start != j.start_time || start == 0)
    return fmt::format("moves process {} (start {}), not this run's harness", field(e, "pid").substr(0, 20),
                       field(e, "start_time").substr(0, 20));
  const std::string from = field(e, "from"), to = field(e, "to");
  if (!from.ends_with("/harness")) return fmt::format("moves out of {}, not the run's harness cgroup", from.substr(0, 200));
  if (std::string why = check_cgroup_dir(j, from); !why.empty()) return why;
  if (fs::path(from).parent_path().parent_path().string() != to)
    return fmt::format("moves back to {}, not the cgroup above {}", to.substr(0, 200), from);
  return "";
}

namespace {

// A process group of the run: shared by process_group and signal_group (which may only
// send SIGCONT back).
std::string check_group(const JournalFile& j, const JournalEntry& e, bool sigcont_only) {
  std::uint64_t pgid = 0, start = 0;
  if (!decimal(field(e, "pgid"), INT_MAX, &pgid) || pgid <= 1)
    return fmt::format("process group \"{}\" is not a process group id above 1", field(e, "pgid").substr(0, 20));
  if (!decimal(field(e, "start_time"), UINT64_MAX, &start) || start == 0)
    return fmt::format("process group {} has no start time, so which processes were the run's cannot be verified",
                       pgid);
  if (sigcont_only && field(e, "signal") != std::to_string(SIGCONT))
    return fmt::format("signal \"{}\" is not SIGCONT, the only one a pause sends back", field(e, "signal").substr(0, 20));
  // Membership of the recorded cgroup vouches for a process: it must be the run's own.
  if (e.fields.count("cgroup") != 0) return check_cgroup_dir(j, field(e, "cgroup"));
  return "";
}

std::string check_netns(const JournalEntry& e) {
  if (!matches(field(e, "netns"), "net:\\[[0-9]{1,20}\\]") || !decimal(field(e, "netns_cookie"), UINT64_MAX))
    return "no network namespace id and cookie to find it by";
  return "";
}

std::string runtime_of(const JournalFile& j) { return "/tmp/chaosbench-" + j.run_id; }

}  // namespace

std::string check_path(const JournalFile& j, const JournalEntry& e) {
  const std::string runtime = runtime_of(j);
  return field(e, "path") == runtime ? "" : fmt::format("{} is not the run's runtime directory {}",
                                                        field(e, "path").substr(0, 200), runtime);
}

std::string check_fault_control(const JournalFile& j, const JournalEntry& e) {
  const std::string runtime = runtime_of(j);
  std::uint64_t slot = 0;
  const std::string p = field(e, "path");
  if (!p.starts_with(runtime + "/control/rank") || !matches(p.substr(runtime.size()), "/control/rank[0-9]{1,6}\\.ctl"))
    return fmt::format("{} is not a control block in {}/control", p.substr(0, 200), runtime);
  return decimal(field(e, "slot"), CB_FAULT_KINDS - 1, &slot) ? "" : "slot is not a fault kind";
}

std::string check_cgroup(const JournalFile& j, const JournalEntry& e) { return check_cgroup_dir(j, field(e, "path")); }

std::string check_process_group(const JournalFile& j, const JournalEntry& e) { return check_group(j, e, false); }

std::string check_signal_group(const JournalFile& j, const JournalEntry& e) { return check_group(j, e, true); }

std::string check_tc_root(const JournalFile&, const JournalEntry& e) {
  if (std::string why = check_netns(e); !why.empty()) return why;
  if (!matches(field(e, "interface"), "[A-Za-z0-9_.-]{1,15}") || !matches(field(e, "handle"), "[0-9a-f]{1,4}:"))
    return "not an interface name and qdisc handle";
  return "";
}

std::string check_iptables_chain(const JournalFile&, const JournalEntry& e) {
  if (std::string why = check_netns(e); !why.empty()) return why;
  if (!matches(field(e, "chain"), "chaosbench[0-9]{1,9}") ||
      (e.fields.count("hook") && !matches(field(e, "hook"), "INPUT|FORWARD|OUTPUT")) ||
      (e.fields.count("table") && !matches(field(e, "table"), "filter|mangle")))
    return "not a chaosbench iptables chain";
  return "";
}

std::string check_entry(const JournalFile& j, const JournalEntry& e) {
  if (const UndoKindRow* row = find_undo_kind(e.kind)) return row->check(j, e);
  return fmt::format("unknown kind \"{}\" (written by a newer chaosbench?)", e.kind.substr(0, 64));
}

}  // namespace chaosbench::harness
