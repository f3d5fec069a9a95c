#include "faults/target.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

namespace chaosbench::faults {

std::string control_path(const std::string& control_dir, int rank) {
  return fmt::format("{}/rank{}.ctl", control_dir, rank);
}

std::string_view to_string(TargetForm f) {
  switch (f) {
    case TargetForm::kAll: return "all";
    case TargetForm::kNodes: return "nodes";
    case TargetForm::kRanks: return "ranks";
    case TargetForm::kRandom: return "random";
    case TargetForm::kPercent: return "percent";
    case TargetForm::kLinks: return "links";
    case TargetForm::kGroups: return "groups";
  }
  return "?";
}

std::vector<std::string> ResolvedTarget::names() const {
  std::vector<std::string> out;
  if (!links.empty()) {
    for (const auto& [a, b] : links) out.push_back(fmt::format("node{}<->node{}", a, b));
  } else if (!groups.empty()) {
    for (const auto& g : groups) out.push_back(fmt::format("group[{}]", fmt::join(g, ",")));
  } else if (!nodes.empty()) {
    for (int n : nodes) out.push_back(fmt::format("node{}", n));
  } else {
    for (int r : ranks) out.push_back(fmt::format("rank{}", r));
  }
  return out;
}

}  // namespace chaosbench::faults
