#include "harness/doctor/cgroup_probe.h"

#include <array>
#include <cstdlib>
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <optional>
#include <sstream>
#include <unistd.h>

#include "harness/cluster/node_cgroups.h"
#include "harness/doctor/probe_files.h"

namespace chaosbench::harness {
namespace {

constexpr std::array<std::string_view, 4> kControllers{"cpu", "memory", "freezer", "pids"};

bool in_list(std::string_view list, std::string_view item, char separator) {
  while (!list.empty()) {
    auto end = list.find(separator);
    if (trim(list.substr(0, end)) == item) return true;
    if (end == std::string_view::npos) break;
    list.remove_prefix(end + 1);
  }
  return false;
}

// /proc/cgroups: "#subsys_name hierarchy num_cgroups enabled". nullopt when not listed.
std::optional<bool> enabled_in_proc_cgroups(std::string_view proc_cgroups, std::string_view controller) {
  for (auto line : split_lines(proc_cgroups)) {
    std::istringstream fields{std::string(line)};
    std::string name, hierarchy, count;
    int enabled = 0;
    if (fields >> name >> hierarchy >> count >> enabled && name == controller) return enabled != 0;
  }
  return std::nullopt;
}

bool kernel_at_least(const std::string& release, int major, int minor) {
  int got_major = 0, got_minor = 0;
  char dot = 0;
  std::istringstream in(release);
  if (!(in >> got_major >> dot >> got_minor) || dot != '.') return false;
  return got_major > major || (got_major == major && got_minor >= minor);
}

}  // namespace

namespace {

// Where `controller` is for v2 node cgroups below `own`, or "" with the reason in `missing`.
std::string v2_place(std::string_view controller, const CgroupInputs& in, const std::string& own, std::string& missing) {
  if (controller == "pids") return fmt::format("v2 cgroup.procs at {} (no controller needed)", own);
  if (controller == "freezer") {
    if (in.v2_core_freezer) return fmt::format("v2 core freezer (cgroup.freeze) at {}", own);
    missing = "no v2 core freezer (cgroup.freeze needs kernel 5.2)";
    return "";
  }
  auto plan = plan_v2_controllers({std::string(controller)}, own, in.v2_controllers, in.v2_subtree_control,
                                  in.v2_own_is_root, in.v2_others_in_own);
  if (auto why = plan.why_missing.find(std::string(controller)); why != plan.why_missing.end()) {
    missing = why->second;
    return "";
  }
  return fmt::format("v2 at {}{}", own, plan.move_harness ? " (chaosbench moves itself into a leaf cgroup to hand it on)" : "");
}

}  // namespace

std::vector<Capability> assess_cgroups(const CgroupInputs& in) {
  using S = CapabilityStatus;
  const MountEntry* v2 = cgroup2_mount(in.mounts);  // the one node cgroups would use
  bool any_v1 = false;
  for (const auto& m : in.mounts) any_v1 = any_v1 || m.fs_type == "cgroup";
  // A controller bound to a v1 hierarchy is not available in v2: NodeCgroups takes v1
  // wherever one of its controllers is there.
  auto on_v1 = [&](std::string_view controller) -> const MountEntry* {
    for (const auto& m : in.mounts)
      if (m.fs_type == "cgroup" && in_list(m.super_options, controller, ',')) return &m;
    return nullptr;
  };
  bool controller_on_v1 = false;
  for (auto controller : kControllers) controller_on_v1 = controller_on_v1 || on_v1(controller);
  const int version = node_cgroup_version(controller_on_v1, v2 != nullptr, in.forced_version);
  const std::string own = !in.v2_own_dir.empty() ? in.v2_own_dir : v2 ? v2->mount_point : "";
  std::vector<std::string> v2_controllers;  // cgroup.controllers ends in a newline
  std::istringstream words(in.v2_controllers);
  for (std::string w; words >> w;) v2_controllers.push_back(w);
  const std::string v2_list = v2_controllers.empty() ? "none" : fmt::format("{}", fmt::join(v2_controllers, " "));
  const std::string use = version == 0 ? "no node cgroups" : fmt::format("node cgroups use v{}", version);

  std::vector<Capability> caps;
  if (!v2 && !any_v1)
    caps.push_back({"cgroup.mode", "cgroups", S::kMissing, "no cgroup or cgroup2 filesystem mounted", {}});
  else if (v2 && any_v1)
    caps.push_back({"cgroup.mode", "cgroups", S::kOk,
                    fmt::format("hybrid: v1 hierarchies, cgroup2 at {} (v2 controllers for {}: {}); {}", v2->mount_point,
                                own, v2_list, use),
                    {}});
  else if (v2)
    caps.push_back({"cgroup.mode", "cgroups", S::kOk,
                    fmt::format("unified v2 at {} (v2 controllers for {}: {}); {}", v2->mount_point, own, v2_list, use),
                    {}});
  else
    caps.push_back({"cgroup.mode", "cgroups", S::kOk, fmt::format("v1 hierarchies only; {}", use), {}});

  for (auto controller : kControllers) {
    std::string name = fmt::format("cgroup.{}", controller);
    auto add = [&](S status, std::string detail) { caps.push_back({name, "cgroups", status, std::move(detail), {}}); };
    auto enabled = enabled_in_proc_cgroups(in.proc_cgroups, controller);
    if (enabled && !*enabled) {
      add(S::kMissing, "disabled (enabled = 0 in /proc/cgroups; cgroup_disable= on the kernel command line?)");
      continue;
    }
    std::string where, mount;
    if (version == 1) {
      if (const auto* v1 = on_v1(controller)) {
        where = fmt::format("v1 at {}", v1->mount_point);
        mount = v1->mount_point;
      } else {
        add(S::kMissing, v2 ? "not on a v1 hierarchy (node cgroups use v1 on this host)" : "not mounted");
        continue;
      }
    } else if (version == 2) {
      mount = own;
      std::string missing;
      where = v2_place(controller, in, own, missing);
      if (where.empty()) {
        add(S::kMissing, missing);
        continue;
      }
    } else {
      add(S::kMissing, "not mounted");
      continue;
    }
    if (in.writable && !in.writable(mount))
      add(S::kMissing, fmt::format("{}, but not writable by this user", where));
    else
      add(S::kOk, where);
  }
  return caps;
}

std::vector<Capability> probe_cgroups(const std::string& kernel_release) {
  CgroupInputs in;
  const std::string mountinfo = read_text_file("/proc/self/mountinfo").value_or("");
  in.mounts = parse_mountinfo(mountinfo);
  in.proc_cgroups = read_text_file("/proc/cgroups").value_or("");
  in.v2_own_dir = own_v2_cgroup(read_text_file("/proc/self/cgroup").value_or(""), mountinfo);
  if (!in.v2_own_dir.empty()) {
    in.v2_controllers = read_text_file(in.v2_own_dir + "/cgroup.controllers").value_or("");
    in.v2_subtree_control = read_text_file(in.v2_own_dir + "/cgroup.subtree_control").value_or("");
    in.v2_own_is_root = !path_exists(in.v2_own_dir + "/cgroup.type");
    std::istringstream procs(read_text_file(in.v2_own_dir + "/cgroup.procs").value_or(""));
    for (pid_t pid; procs >> pid;) in.v2_others_in_own = in.v2_others_in_own || pid != ::getpid();
  }
  in.v2_core_freezer = kernel_at_least(kernel_release, 5, 2);
  if (const char* forced = std::getenv("CHAOSBENCH_CGROUP_VERSION")) in.forced_version = forced;
  in.writable = [](const std::string& path) { return ::access(path.c_str(), W_OK) == 0; };
  return assess_cgroups(in);
}

}  // namespace chaosbench::harness
