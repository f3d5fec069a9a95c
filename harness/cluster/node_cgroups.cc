#include "harness/cluster/node_cgroups.h"

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <filesystem>
#include <fmt/format.h>
#include <fstream>
#include <sstream>
#include <spdlog/spdlog.h>
#include <stdexcept>
#include <sys/stat.h>
#include <unistd.h>

#include "harness/journal/journal.h"
#include "harness/journal/undo_kind.h"

namespace chaosbench::harness {
namespace {

namespace fs = std::filesystem;

std::vector<std::string> split(const std::string& s, char sep) {
  std::vector<std::string> out;
  std::stringstream in(s);
  std::string item;
  while (std::getline(in, item, sep)) out.push_back(item);
  return out;
}

}  // namespace

std::map<std::string, std::string> own_v1_cgroups() {
  // /proc/self/cgroup: "4:memory:/process_api/abc" -> controller -> path in its hierarchy.
  std::map<std::string, std::string> own_path;
  std::ifstream cg("/proc/self/cgroup");
  std::string line;
  while (std::getline(cg, line)) {
    auto parts = split(line, ':');
    if (parts.size() < 3 || parts[1].empty()) continue;
    auto path = line.substr(parts[0].size() + parts[1].size() + 2);
    for (const auto& c : split(parts[1], ',')) own_path[c] = path;
  }
  // /proc/self/mountinfo: "36 25 0:31 / /sys/fs/cgroup/cpu rw,... - cgroup cgroup rw,cpu":
  // mount root (4th), mount point (5th), and after " - " the type and super options.
  std::map<std::string, std::string> out;
  std::ifstream mi("/proc/self/mountinfo");
  while (std::getline(mi, line)) {
    auto dash = line.find(" - ");
    if (dash == std::string::npos) continue;
    std::istringstream tail(line.substr(dash + 3));
    std::string type, source, options;
    tail >> type >> source >> options;
    if (type != "cgroup") continue;
    std::istringstream head(line.substr(0, dash));
    std::string id, parent, devno, root, mount;
    head >> id >> parent >> devno >> root >> mount;
    for (const auto& opt : split(options, ',')) {
      auto it = own_path.find(opt);
      if (it == own_path.end() || out.count(opt)) continue;
      // Our path is relative to the hierarchy's root; the mount shows `root` of it.
      std::string rel = it->second;
      if (root != "/" && rel.starts_with(root)) rel = rel.substr(root.size());
      std::string dir = (fs::path(mount) / fs::path(rel).relative_path()).lexically_normal().string();
      while (dir.size() > 1 && dir.back() == '/') dir.pop_back();  // "/sys/fs/cgroup/pids/" at the root
      out[opt] = dir;
    }
  }
  return out;
}

int node_cgroup_version(bool controller_on_v1, bool have_v2, std::string_view forced) {
  if (forced == "2") return have_v2 ? 2 : 0;
  if (forced == "1" || controller_on_v1) return 1;
  return have_v2 ? 2 : 0;
}

NodeCgroups::NodeCgroups(int nodes, const std::string& run_id, Journal& journal,
                         const std::vector<std::string>& controllers)
    : journal_(journal) {
  if (::geteuid() != 0) {
    why_not_ = "not root: node cgroups need root (node.pause falls back to signals)";
    return;
  }
  auto own = own_v1_cgroups();
  bool on_v1 = false;
  for (const auto& c : controllers) on_v1 = on_v1 || own.count(c) > 0;
  const std::string v2 = own_v2_cgroup();
  const char* forced = std::getenv("CHAOSBENCH_CGROUP_VERSION");
  switch (node_cgroup_version(on_v1, !v2.empty(), forced ? forced : "")) {
    case 1: make_v1(nodes, run_id, controllers, own); break;
    case 2: make_v2(nodes, run_id, controllers, v2); break;
    default: why_not_ = "no cgroup hierarchy to use: neither a v1 controller nor cgroup2 is mounted";
  }
}

NodeCgroups::NodeCgroups(int nodes, const std::string& run_id, Journal& journal,
                         const std::vector<std::string>& controllers, const std::string& v2_base)
    : journal_(journal) {
  make_v2(nodes, run_id, controllers, v2_base);
}

void NodeCgroups::make_dir(const std::string& path) {
  entries_.push_back(journal_.record(to_string(UndoKind::kCgroup), {{"path", path}}));
  if (::mkdir(path.c_str(), 0755) != 0) throw std::runtime_error(std::strerror(errno));
}

void NodeCgroups::make_v1(int nodes, const std::string& run_id, const std::vector<std::string>& controllers,
                          const std::map<std::string, std::string>& own) {
  for (const auto& controller : controllers) {
    auto it = own.find(controller);
    if (it == own.end()) continue;
    const std::string base = it->second + "/chaosbench-" + run_id;
    try {
      make_dir(base);
      std::vector<std::string> per_node;
      for (int n = 0; n < nodes; ++n) {
        std::string dir = fmt::format("{}/node{}", base, n);
        make_dir(dir);
        per_node.push_back(dir);
      }
      dirs_[controller] = std::move(per_node);
    } catch (const std::runtime_error& e) {
      spdlog::warn("cgroup {}: cannot create {}: {}", controller, base, e.what());
    }
  }
  if (dirs_.empty()) why_not_ = "no cgroup v1 controller could be used";
}

NodeCgroups::~NodeCgroups() {
  for (auto it = entries_.rbegin(); it != entries_.rend(); ++it) {
    try {
      journal_.undo(*it);
    } catch (const std::exception& e) {
      spdlog::error("{} (left in the journal for chaosbench cleanup)", e.what());
    }
  }
}

std::string NodeCgroups::why_missing(const std::string& controller) const {
  auto it = why_missing_.find(controller);
  return it != why_missing_.end() ? it->second : "that controller is not mounted";
}

void NodeCgroups::join(int node, pid_t pid) const {
  std::vector<std::string> joined;  // v2 lists the node's one directory under every controller
  for (const auto& [controller, per_node] : dirs_) {
    const std::string& dir = per_node.at(static_cast<std::size_t>(node));
    if (std::find(joined.begin(), joined.end(), dir) != joined.end()) continue;
    joined.push_back(dir);
    std::string procs = dir + "/cgroup.procs";
    int fd = ::open(procs.c_str(), O_WRONLY | O_CLOEXEC);
    std::string text = std::to_string(pid);
    bool ok = fd >= 0 && ::write(fd, text.data(), text.size()) == static_cast<ssize_t>(text.size());
    int err = errno;
    if (fd >= 0) ::close(fd);
    if (!ok) throw std::runtime_error(fmt::format("cannot move pid {} into {}: {}", pid, procs, std::strerror(err)));
  }
}

std::string NodeCgroups::dir(int node, const std::string& controller) const {
  auto it = dirs_.find(controller);
  if (it == dirs_.end()) return "";
  return it->second.at(static_cast<std::size_t>(node));
}

}  // namespace chaosbench::harness
