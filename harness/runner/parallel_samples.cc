#include "harness/runner/parallel_samples.h"

#include <set>
#include <string>

#include "harness/runner/aggregator.h"

namespace chaosbench::harness {
namespace {

constexpr const char* kCoordinates[] = {"tp_rank", "pp_stage", "dp_rank"};

bool has_coordinates(const bench::Labels& labels) {
  for (const char* key : kCoordinates)
    if (labels.contains(key)) return true;
  return false;
}

}  // namespace

std::vector<reports::MetricRecord> pool_parallel_samples(const std::vector<StoredSample>& samples, double t0_wall,
                                                         const std::vector<reports::Phase>& phases) {
  std::set<std::string, std::less<>> plain;  // names some sample carries without coordinates
  bool any = false;
  for (const auto& s : samples) {
    if (has_coordinates(s.sample.labels)) any = true;
    else plain.insert(s.sample.name);
  }
  if (!any) return {};
  std::vector<StoredSample> pooled;
  for (const auto& s : samples) {
    if (!has_coordinates(s.sample.labels) || plain.contains(s.sample.name)) continue;
    auto& copy = pooled.emplace_back(s);
    for (const char* key : kCoordinates) copy.sample.labels.erase(key);
  }
  return aggregate(pooled, t0_wall, phases);
}

}  // namespace chaosbench::harness
