// /proc/self/mountinfo, parsed: where each filesystem is mounted and which part of it.
// Node cgroups find the cgroup2 hierarchy through it; the doctor judges cgroup
// controllers with it. Pure: takes the file's text.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace chaosbench::harness {

struct MountEntry {
  std::string mount_point;    // octal escapes (\040) decoded
  std::string fs_type;        // "cgroup", "cgroup2", ...
  std::string super_options;  // "rw,cpu" — v1 hierarchies name their controllers here
  std::string root = "/";     // the directory of the filesystem mounted there (4th field)
};

std::vector<MountEntry> parse_mountinfo(std::string_view text);

// The cgroup2 mount of the host's hierarchy: /sys/fs/cgroup (unified), else a hybrid's
// /sys/fs/cgroup/unified, else the first one (a test's own mount is never preferred to
// those); nullptr when there is none. Points into `mounts`.
const MountEntry* cgroup2_mount(const std::vector<MountEntry>& mounts);

}  // namespace chaosbench::harness
