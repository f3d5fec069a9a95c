#include "harness/derive/running_efficiency.h"

#include <algorithm>
#include <map>
#include <tuple>

#include "harness/derive/aggregator.h"

namespace chaosbench::harness {
namespace {

struct Computed {
  std::int64_t attempt = 0, generation = 0, step = 0;
  double t = 0;  // when its last rank reported it
  std::vector<double> step_ms;
};

// Each (attempt, generation, step) once, in completion order. A step reported twice by a
// rank in one membership (an outside trainer restarted without the fields) keeps the
// first report's place: such pairs are rare and only ever excluded below.
std::vector<Computed> computations(const TrainTimeline& tl) {
  std::map<std::tuple<std::int64_t, std::int64_t, std::int64_t>, Computed> by_key;
  for (const auto& s : tl.steps) {
    auto& c = by_key[{s.attempt, s.generation, s.step}];
    c.attempt = s.attempt;
    c.generation = s.generation;
    c.step = s.step;
    c.t = std::max(c.t, s.t);
    if (s.step_ms) c.step_ms.push_back(*s.step_ms);
  }
  std::vector<Computed> out;
  for (auto& [key, c] : by_key) out.push_back(std::move(c));
  std::sort(out.begin(), out.end(), [](const auto& a, const auto& b) { return a.t < b.t; });
  return out;
}

bool any_in(const std::vector<double>& sorted, double from, double to) {
  auto it = std::upper_bound(sorted.begin(), sorted.end(), from);
  return it != sorted.end() && *it <= to;
}

}  // namespace

std::optional<double> running_efficiency(const TrainTimeline& tl, const std::vector<double>& fault_applied_s) {
  std::vector<double> breaks = fault_applied_s;
  for (const auto& s : tl.starts) breaks.push_back(s.t);
  std::sort(breaks.begin(), breaks.end());
  const auto steps = computations(tl);
  double productive_s = 0, wall_s = 0;
  int pairs = 0;
  for (std::size_t i = 1; i < steps.size(); ++i) {
    const auto& a = steps[i - 1];
    const auto& b = steps[i];
    if (b.step != a.step + 1 || b.attempt != a.attempt || b.generation != a.generation || b.step_ms.empty()) continue;
    if (any_in(breaks, a.t, b.t)) continue;
    productive_s += compute_stats(b.step_ms).p50 * 1e-3;
    wall_s += b.t - a.t;
    ++pairs;
  }
  if (pairs < 10 || wall_s <= 0) return std::nullopt;
  return std::min(1.0, productive_s / wall_s);
}

}  // namespace chaosbench::harness
