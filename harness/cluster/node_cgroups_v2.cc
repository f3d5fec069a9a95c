// The cgroup v2 half of NodeCgroups (node_cgroups.h): finding the harness's own v2
// cgroup, deciding how cpu and memory reach the node cgroups, and making them.
#include <algorithm>
#include <filesystem>
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <fstream>
#include <optional>
#include <spdlog/spdlog.h>
#include <sstream>
#include <stdexcept>
#include <unistd.h>

#include "common/kernel/sysfs_file.h"
#include "harness/cluster/mountinfo.h"
#include "harness/cluster/node_cgroups.h"
#include "harness/journal/journal.h"
#include "harness/journal/undo_kind.h"
#include "harness/journal/process_identity.h"

namespace chaosbench::harness {
namespace {

namespace fs = std::filesystem;

std::vector<std::string> words(std::string_view text) {
  std::vector<std::string> out;
  std::istringstream in{std::string(text)};
  for (std::string w; in >> w;) out.push_back(w);
  return out;
}

bool contains(const std::vector<std::string>& list, const std::string& item) {
  return std::find(list.begin(), list.end(), item) != list.end();
}

// The whole file ("" when it cannot be read): cgroup.procs may outgrow read_setting's buffer.
std::string read_all(const std::string& path) {
  std::ifstream in(path);
  std::stringstream out;
  out << in.rdbuf();
  return out.str();
}

}  // namespace

std::string own_v2_cgroup(std::string_view proc_self_cgroup, std::string_view mountinfo) {
  // "0::/user.slice/session-1.scope": the v2 line; v1 lines name their controllers.
  std::optional<std::string> path;
  std::istringstream lines{std::string(proc_self_cgroup)};
  for (std::string line; std::getline(lines, line);)
    if (line.starts_with("0::")) path = line.substr(3);
  if (!path) return "";
  const auto mounts = parse_mountinfo(mountinfo);
  const MountEntry* best = cgroup2_mount(mounts);
  if (!best) return "";
  // The path is relative to the hierarchy's root; the mount shows `root` of it.
  std::string rel = *path;
  if (best->root != "/") {
    if (!(rel == best->root || rel.starts_with(best->root + "/"))) return "";  // not below this mount
    rel = rel.substr(best->root.size());
  }
  std::string dir = (fs::path(best->mount_point) / fs::path(rel).relative_path()).lexically_normal().string();
  while (dir.size() > 1 && dir.back() == '/') dir.pop_back();  // "/sys/fs/cgroup/" at the root
  return dir;
}

std::string own_v2_cgroup() { return own_v2_cgroup(read_all("/proc/self/cgroup"), read_all("/proc/self/mountinfo")); }

V2ControllerPlan plan_v2_controllers(const std::vector<std::string>& wanted, const std::string& base,
                                     std::string_view base_controllers, std::string_view base_subtree_control,
                                     bool base_is_root, bool others_in_base) {
  V2ControllerPlan plan;
  const auto available = words(base_controllers);
  const auto enabled = words(base_subtree_control);
  for (const auto& c : wanted) {
    if (!contains(available, c)) {
      plan.why_missing[c] = fmt::format(
          "the {} controller is not available to chaosbench's cgroup {} (its cgroup.controllers: \"{}\"; "
          "bound to a v1 hierarchy, or not delegated: systemd-run --scope -p Delegate=yes)",
          c, base, fmt::join(available, " "));
      continue;
    }
    plan.enable.push_back(c);
    if (!contains(enabled, c)) plan.enable_in_base.push_back(c);
  }
  // The root cgroup may hold processes and hand out controllers at once; any other may not.
  if (plan.enable_in_base.empty() || base_is_root) return plan;
  if (!others_in_base) {
    plan.move_harness = true;
    return plan;
  }
  for (const auto& c : plan.enable_in_base) {
    plan.why_missing[c] = fmt::format(
        "cgroup v2 gives the {} controller only to the children of a cgroup without processes of its own, and "
        "chaosbench's cgroup {} holds other processes: run chaosbench alone in a cgroup "
        "(systemd-run --scope -p Delegate=yes chaosbench run ...)",
        c, base);
    plan.enable.erase(std::find(plan.enable.begin(), plan.enable.end(), c));
  }
  plan.enable_in_base.clear();
  return plan;
}

void NodeCgroups::make_v2(int nodes, const std::string& run_id, const std::vector<std::string>& controllers,
                          const std::string& base) {
  version_ = 2;
  std::vector<std::string> wanted;  // freezer (cgroup.freeze) and pids (cgroup.procs) are core v2
  for (const auto& c : controllers)
    if (c != "freezer" && c != "pids") wanted.push_back(c);
  bool others = false;
  for (const auto& pid : words(read_all(base + "/cgroup.procs"))) others = others || pid != std::to_string(::getpid());
  auto plan = plan_v2_controllers(wanted, base, read_all(base + "/cgroup.controllers"),
                                  read_all(base + "/cgroup.subtree_control"), !fs::exists(base + "/cgroup.type"), others);
  why_missing_ = plan.why_missing;
  const std::string parent = base + "/chaosbench-" + run_id;
  std::vector<std::string> per_node;
  try {
    make_dir(parent);
    if (plan.move_harness) move_into_leaf(parent + "/harness", base);
    try {
      if (!plan.enable_in_base.empty()) enable_controllers(base, plan.enable_in_base, "chaosbench-" + run_id);
      if (!plan.enable.empty()) enable_controllers(parent, plan.enable);
    } catch (const std::runtime_error& e) {
      // Journaled: whatever did change is undone with the rest. The nodes go on without.
      for (const auto& c : plan.enable) why_missing_[c] = fmt::format("cannot enable it below {}: {}", base, e.what());
      plan.enable.clear();
    }
    for (int n = 0; n < nodes; ++n) {
      std::string dir = fmt::format("{}/node{}", parent, n);
      make_dir(dir);
      per_node.push_back(dir);
    }
  } catch (const std::runtime_error& e) {
    why_not_ = fmt::format("cannot create cgroup v2 node cgroups under {}: {}", base, e.what());
    spdlog::warn("{}", why_not_);
    return;
  }
  for (const auto& c : controllers) {
    if (c == "freezer" && !per_node.empty() && !fs::exists(per_node.front() + "/cgroup.freeze")) {
      why_missing_[c] = "no cgroup.freeze in v2 node cgroups (kernel before 5.2)";
      continue;
    }
    if (c == "freezer" || c == "pids" || contains(plan.enable, c)) dirs_[c] = per_node;
  }
  if (dirs_.empty()) why_not_ = fmt::format("cgroup v2 under {} gives none of the controllers asked for", base);
}

void NodeCgroups::move_into_leaf(const std::string& leaf, const std::string& base) {
  make_dir(leaf);
  const pid_t self = ::getpid();
  auto st = read_proc_stat(self);
  entries_.push_back(journal_.record(to_string(UndoKind::kCgroupMove), {{"pid", std::to_string(self)},
                                                     {"start_time", std::to_string(st ? st->start_time : 0)},
                                                     {"from", leaf},
                                                     {"to", base}}));
  common::write_setting(leaf + "/cgroup.procs", std::to_string(self));
}

void NodeCgroups::enable_controllers(const std::string& dir, const std::vector<std::string>& controllers,
                                     const std::string& own_child) {
  // echo "+cpu +memory" > DIR/cgroup.subtree_control; undo: echo "-cpu -memory" > ...
  std::vector<std::string> on, off;
  for (const auto& c : controllers) {
    on.push_back("+" + c);
    off.push_back("-" + c);
  }
  const std::string file = dir + "/cgroup.subtree_control";
  std::map<std::string, std::string> undo{{"path", file}, {"value", fmt::format("{}", fmt::join(off, " "))}};
  if (!own_child.empty()) undo["own_child"] = own_child;  // shared: undone only while ours is its only child
  entries_.push_back(journal_.record(to_string(UndoKind::kWrite), std::move(undo)));
  common::write_setting(file, fmt::format("{}", fmt::join(on, " ")));
}

}  // namespace chaosbench::harness
