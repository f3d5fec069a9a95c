#include "harness/doctor/cgroup_probe.h"

#include <array>
#include <fmt/format.h>
#include <optional>
#include <sstream>
#include <unistd.h>

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

std::vector<Capability> assess_cgroups(const CgroupInputs& in) {
  using S = CapabilityStatus;
  const MountEntry* v2 = nullptr;
  bool any_v1 = false;
  for (const auto& m : in.mounts) {
    if (m.fs_type == "cgroup2" && !v2) v2 = &m;
    if (m.fs_type == "cgroup") any_v1 = true;
  }
  std::vector<Capability> caps;
  if (!v2 && !any_v1)
    caps.push_back({"cgroup.mode", "cgroups", S::kMissing, "no cgroup or cgroup2 filesystem mounted", {}});
  else if (v2 && any_v1)
    caps.push_back({"cgroup.mode", "cgroups", S::kOk, fmt::format("hybrid: v1 hierarchies, cgroup2 at {}", v2->mount_point), {}});
  else if (v2)
    caps.push_back({"cgroup.mode", "cgroups", S::kOk, fmt::format("unified v2 at {}", v2->mount_point), {}});
  else
    caps.push_back({"cgroup.mode", "cgroups", S::kOk, "v1 hierarchies only", {}});

  for (auto controller : kControllers) {
    std::string name = fmt::format("cgroup.{}", controller);
    auto add = [&](S status, std::string detail) { caps.push_back({name, "cgroups", status, std::move(detail), {}}); };
    auto enabled = enabled_in_proc_cgroups(in.proc_cgroups, controller);
    if (enabled && !*enabled) {
      add(S::kMissing, "disabled (enabled = 0 in /proc/cgroups; cgroup_disable= on the kernel command line?)");
      continue;
    }
    // A controller bound to a v1 hierarchy is not available in v2, so v1 is looked at first.
    const MountEntry* v1 = nullptr;
    for (const auto& m : in.mounts)
      if (m.fs_type == "cgroup" && in_list(m.super_options, controller, ',')) {
        v1 = &m;
        break;
      }
    std::string where;
    if (v1)
      where = fmt::format("v1 at {}", v1->mount_point);
    else if (v2 && in_list(in.v2_controllers, controller, ' '))
      where = fmt::format("v2 at {}", v2->mount_point);
    else if (v2 && controller == "freezer" && in.v2_core_freezer)
      where = fmt::format("v2 core freezer (cgroup.freeze) at {}", v2->mount_point);
    if (where.empty()) {
      add(S::kMissing, v2 ? fmt::format("not on a v1 hierarchy, not in {}/cgroup.controllers", v2->mount_point)
                          : "not mounted");
      continue;
    }
    const std::string& mount = v1 ? v1->mount_point : v2->mount_point;
    if (in.writable && !in.writable(mount))
      add(S::kMissing, fmt::format("{}, but not writable by this user", where));
    else
      add(S::kOk, where);
  }
  return caps;
}

std::vector<Capability> probe_cgroups(const std::string& kernel_release) {
  CgroupInputs in;
  in.mounts = parse_mountinfo(read_text_file("/proc/self/mountinfo").value_or(""));
  in.proc_cgroups = read_text_file("/proc/cgroups").value_or("");
  for (const auto& m : in.mounts)
    if (m.fs_type == "cgroup2") {
      in.v2_controllers = std::string(trim(read_text_file(m.mount_point + "/cgroup.controllers").value_or("")));
      break;
    }
  in.v2_core_freezer = kernel_at_least(kernel_release, 5, 2);
  in.writable = [](const std::string& path) { return ::access(path.c_str(), W_OK) == 0; };
  return assess_cgroups(in);
}

}  // namespace chaosbench::harness
