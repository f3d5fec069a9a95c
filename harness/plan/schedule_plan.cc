#include "harness/plan/schedule_plan.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <numeric>
#include <random>

#include "reports/goodput/failure_arrivals.h"
#include "reports/stats/split_mix64.h"

namespace chaosbench::harness {
namespace {

// Independent streams per fault and purpose: the seed, the fault's index and a salt
// mixed through one splitmix64 step each.
reports::SplitMix64 stream(std::uint64_t seed, std::size_t fault_index, std::uint64_t salt) {
  reports::SplitMix64 mix(seed ^ (0xD1B54A32D192ED03ULL * (fault_index + 1)) ^ salt);
  return reports::SplitMix64(mix.next());
}

// The goodput model simulates the same draw (reports/goodput/failure_arrivals.h).
double inter_arrival(const ArrivalSpec& a, reports::SplitMix64& rng) {
  return reports::inter_arrival_s(rng, a.process == ArrivalSpec::Process::kWeibull, a.mtbf.seconds(), a.shape);
}

// The trigger times of one fault without `after`: at (+ repeats), at_step, or arrivals.
std::vector<PlannedOccurrence> own_occurrences(const FaultSpec& f, std::size_t index, std::uint64_t seed,
                                               double horizon_s) {
  std::vector<PlannedOccurrence> out;
  auto base = [&] {
    PlannedOccurrence o;
    o.fault = index;
    if (f.duration) o.duration_s = f.duration->seconds();
    return o;
  };
  if (f.arrivals) {
    auto rng = stream(seed, index, 0xA1);
    double t = f.at ? f.at->seconds() : 0.0;
    for (int k = 0; k < f.arrivals->max_occurrences; ++k) {
      t += inter_arrival(*f.arrivals, rng);
      if (t > horizon_s) break;
      auto o = base();
      o.arrival_s = o.due_s = t;
      out.push_back(o);
    }
    return out;
  }
  const int count = f.repeat ? f.repeat->count : 1;
  for (int k = 0; k < count; ++k) {
    auto o = base();
    if (f.at) o.due_s = f.at->seconds() + (f.repeat ? k * f.repeat->every.seconds() : 0.0);
    if (f.at_step) o.due_step = *f.at_step;
    out.push_back(o);
  }
  return out;
}

// The order in which faults can be planned: a chained fault after the one it follows.
std::vector<std::size_t> chain_order(const std::vector<FaultSpec>& faults) {
  std::map<std::string, std::size_t> index;
  for (std::size_t i = 0; i < faults.size(); ++i) index.emplace(faults[i].name, i);
  std::vector<std::size_t> order;
  std::vector<bool> placed(faults.size(), false);
  for (bool progress = true; progress;) {
    progress = false;
    for (std::size_t i = 0; i < faults.size(); ++i) {
      if (placed[i]) continue;
      auto parent = faults[i].after ? index.find(*faults[i].after) : index.end();
      if (faults[i].after && (parent == index.end() || !placed[parent->second])) continue;
      placed[i] = progress = true;
      order.push_back(i);
    }
  }
  return order;  // a fault in a cycle (refused by the parser) is left out
}

}  // namespace

std::vector<int> pick_nodes(int nodes, int count, std::uint64_t seed, std::size_t fault_index, int occurrence) {
  std::vector<int> all(static_cast<std::size_t>(std::max(nodes, 0)));
  std::iota(all.begin(), all.end(), 0);
  std::uint64_t key = seed ^ (0x9E3779B97F4A7C15ULL * (fault_index + 1));
  if (occurrence > 1) key ^= stream(seed, fault_index, static_cast<std::uint64_t>(occurrence) << 8).next();
  std::mt19937_64 rng(key);
  std::shuffle(all.begin(), all.end(), rng);
  all.resize(static_cast<std::size_t>(std::clamp(count, 0, nodes)));
  std::sort(all.begin(), all.end());
  return all;
}

std::vector<PlannedOccurrence> plan_schedule(const std::vector<FaultSpec>& faults, int nodes, std::uint64_t seed,
                                             double horizon_s) {
  // Per fault first (a chain needs its parent's), then flattened in scenario order.
  std::vector<std::vector<PlannedOccurrence>> per_fault(faults.size());
  std::vector<std::vector<std::pair<std::size_t, std::size_t>>> parents(faults.size());  // (fault, k)
  std::map<std::string, std::size_t> index;
  for (std::size_t i = 0; i < faults.size(); ++i) index.emplace(faults[i].name, i);
  for (std::size_t i : chain_order(faults)) {
    const auto& f = faults[i];
    auto& mine = per_fault[i];
    if (f.after) {
      const std::size_t p = index.at(*f.after);
      for (std::size_t k = 0; k < per_fault[p].size(); ++k) {
        PlannedOccurrence o;
        o.fault = i;
        o.delay_s = f.delay ? f.delay->seconds() : 0.0;
        if (f.duration) o.duration_s = f.duration->seconds();
        o.fires = per_fault[p][k].fires;
        mine.push_back(o);
        parents[i].emplace_back(p, k);
      }
    } else {
      mine = own_occurrences(f, i, seed, horizon_s);
    }
    auto draw = stream(seed, i, 0xB2);
    for (std::size_t k = 0; k < mine.size(); ++k) {
      auto& o = mine[k];
      o.number = static_cast<int>(k) + 1;
      const double u = reports::open_unit(draw);  // drawn for every occurrence: the stream stays aligned
      if (f.probability && u > *f.probability) o.fires = false;
      if (nodes > 0 && f.target.form == faults::TargetForm::kRandom)
        o.nodes = pick_nodes(nodes, f.target.count, seed, i, o.number);
      else if (nodes > 0 && f.target.form == faults::TargetForm::kPercent)
        o.nodes = pick_nodes(nodes, static_cast<int>(std::ceil(f.target.percent.fraction() * nodes)), seed, i, o.number);
    }
  }
  std::vector<std::size_t> offset(faults.size(), 0);
  std::vector<PlannedOccurrence> plan;
  for (std::size_t i = 0; i < faults.size(); ++i) {
    offset[i] = plan.size();
    plan.insert(plan.end(), per_fault[i].begin(), per_fault[i].end());
  }
  for (std::size_t i = 0; i < faults.size(); ++i)
    for (std::size_t k = 0; k < parents[i].size(); ++k)
      plan[offset[i] + k].after = offset[parents[i][k].first] + parents[i][k].second;
  return plan;
}

std::vector<reports::ScheduleEntry> schedule_entries(const std::vector<FaultSpec>& faults,
                                                     const std::vector<PlannedOccurrence>& plan) {
  std::vector<reports::ScheduleEntry> out;
  for (const auto& o : plan) {
    reports::ScheduleEntry e;
    e.fault = faults[o.fault].name;
    e.type = faults[o.fault].type;
    e.occurrence = o.number;
    e.arrival_s = o.arrival_s;
    e.due_s = o.due_s;
    e.at_step = o.due_step;
    if (o.after) {
      e.after = faults[plan[*o.after].fault].name + "#" + std::to_string(plan[*o.after].number);
      e.delay_s = o.delay_s;
    }
    e.duration_s = o.duration_s;
    e.fires = o.fires;
    e.nodes = o.nodes;
    out.push_back(std::move(e));
  }
  return out;
}

}  // namespace chaosbench::harness
