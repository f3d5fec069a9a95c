#include "harness/cluster/mountinfo.h"

#include <charconv>
#include <sstream>

namespace chaosbench::harness {
namespace {

// mountinfo escapes space, tab, newline and backslash as \ooo.
std::string unescape_octal(std::string_view text) {
  std::string out;
  for (std::size_t i = 0; i < text.size(); ++i) {
    if (text[i] == '\\' && i + 3 < text.size()) {
      int value = 0;
      auto [end, ec] = std::from_chars(text.data() + i + 1, text.data() + i + 4, value, 8);
      if (ec == std::errc() && end == text.data() + i + 4) {
        out.push_back(static_cast<char>(value));
        i += 3;
        continue;
      }
    }
    out.push_back(text[i]);
  }
  return out;
}

}  // namespace

std::vector<MountEntry> parse_mountinfo(std::string_view text) {
  std::vector<MountEntry> mounts;
  std::istringstream lines{std::string(text)};
  std::string line;
  while (std::getline(lines, line)) {
    // "36 25 0:31 / /sys/fs/cgroup/cpu rw,nosuid - cgroup cgroup rw,cpu": the optional
    // fields before " - " vary in number, so split there first.
    auto dash = line.find(" - ");
    if (dash == std::string::npos) continue;
    std::istringstream before{line.substr(0, dash)};
    std::istringstream after{line.substr(dash + 3)};
    std::string id, parent, device, root, mount_point, fs_type, source, super_options;
    if (!(before >> id >> parent >> device >> root >> mount_point)) continue;
    if (!(after >> fs_type >> source)) continue;
    after >> super_options;
    mounts.push_back({unescape_octal(mount_point), fs_type, super_options, unescape_octal(root)});
  }
  return mounts;
}

const MountEntry* cgroup2_mount(const std::vector<MountEntry>& mounts) {
  auto preference = [](const MountEntry& m) {
    return m.mount_point == "/sys/fs/cgroup" ? 0 : m.mount_point == "/sys/fs/cgroup/unified" ? 1 : 2;
  };
  const MountEntry* best = nullptr;
  for (const auto& m : mounts)
    if (m.fs_type == "cgroup2" && (!best || preference(m) < preference(*best))) best = &m;
  return best;
}

}  // namespace chaosbench::harness
