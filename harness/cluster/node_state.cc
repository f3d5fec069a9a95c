#include "harness/cluster/node_state.h"

#include <fstream>
#include <sstream>
#include <string>

#include "common/kernel/cgroup_files.h"
#include "harness/cluster/node_cgroups.h"

namespace chaosbench::harness {

bool node_frozen(const NodeCgroups& cgroups, int node) {
  const std::string dir = cgroups.dir(node, "freezer");
  if (dir.empty()) return false;
  const int version = cgroups.version();  // v1 freezer.state not THAWED, v2 cgroup.freeze 1
  std::ifstream in(dir + "/" + std::string(common::cgroup_file(version, common::CgroupKnob::kFreeze)));
  std::string state;
  return in >> state && common::freeze_requested(version, state);
}

bool node_oom_killed(const NodeCgroups& cgroups, int node) {
  const std::string dir = cgroups.dir(node, "memory");
  if (dir.empty()) return false;
  std::ifstream in(dir + "/" + std::string(common::cgroup_file(cgroups.version(), common::CgroupKnob::kOomEvents)));
  std::stringstream text;
  text << in.rdbuf();
  return common::oom_kill_count(text.str()).value_or(0) > 0;
}

}  // namespace chaosbench::harness
