#include "harness/derive/aggregator.h"

#include <algorithm>
#include <cmath>
#include <map>

#include "common/metrics/metric_catalogue.h"
#include "common/values/percentile.h"
#include "harness/derive/comm_derivation.h"

namespace chaosbench::harness {
namespace {

// Groups are keyed by name and labels; reports::Labels is an ordered map, so the pair
// orders deterministically and results.json lists records in a stable order.
using GroupKey = std::pair<std::string, reports::Labels>;

struct Group {
  std::string unit;
  std::vector<double> values;  // in time order
};

double aggregate_value(const reports::Stats& s, const std::vector<double>& values, common::Aggregation a) {
  switch (a) {
    case common::Aggregation::kSum: return s.sum;
    case common::Aggregation::kLast: return values.empty() ? 0.0 : values.back();
    case common::Aggregation::kMax: return s.max;
    case common::Aggregation::kMin: return s.min;
    case common::Aggregation::kMean: break;
  }
  return s.mean;
}

}  // namespace

reports::Labels to_report_labels(const bench::Labels& labels) {
  reports::Labels out;
  for (const auto& [k, v] : labels) std::visit([&, &key = k](const auto& x) { out[key] = x; }, v);
  return out;
}

reports::Stats compute_stats(std::vector<double> values) {
  reports::Stats s;
  s.n = values.size();
  if (values.empty()) return s;
  std::sort(values.begin(), values.end());
  double sum = 0;
  for (double v : values) sum += v;
  s.sum = sum;
  s.mean = sum / static_cast<double>(s.n);
  double sq = 0;
  for (double v : values) sq += (v - s.mean) * (v - s.mean);
  s.stddev = std::sqrt(sq / static_cast<double>(s.n));
  s.min = values.front();
  s.max = values.back();
  s.p50 = common::percentile_sorted(values, 50);
  s.p90 = common::percentile_sorted(values, 90);
  s.p99 = common::percentile_sorted(values, 99);
  return s;
}

std::vector<reports::Phase> build_phases(const FaultSchedule& schedule, const std::vector<FaultSpec>& faults,
                                         double end_s) {
  std::vector<reports::Phase> phases;
  std::vector<double> applies;
  for (const auto& o : schedule.occurrences())
    if (o.applied_s) applies.push_back(*o.applied_s);
  std::sort(applies.begin(), applies.end());
  phases.push_back({"baseline", 0.0, applies.empty() ? end_s : std::min(applies.front(), end_s)});
  for (const auto& o : schedule.occurrences()) {
    if (!o.applied_s) continue;
    const std::string& name = faults[o.fault].name;
    double end = o.reverted_s.value_or(end_s);
    phases.push_back({"fault:" + name, *o.applied_s, end});
    if (o.reverted_s) {
      auto next = std::upper_bound(applies.begin(), applies.end(), *o.reverted_s);
      double rec_end = next == applies.end() ? end_s : *next;
      if (rec_end > *o.reverted_s) phases.push_back({"recovery:" + name, *o.reverted_s, rec_end});
    }
  }
  std::stable_sort(phases.begin(), phases.end(), [](const auto& a, const auto& b) { return a.start_s < b.start_s; });
  return phases;
}

std::vector<reports::MetricRecord> aggregate(const std::vector<StoredSample>& samples, double t0_wall,
                                             const std::vector<reports::Phase>& phases) {
  // Phase names in first-seen order; windows of the same name (repeats) are pooled.
  std::vector<std::string> phase_names;
  for (const auto& p : phases)
    if (std::find(phase_names.begin(), phase_names.end(), p.name) == phase_names.end()) phase_names.push_back(p.name);
  phase_names.push_back("overall");

  std::map<GroupKey, Group> groups;
  for (const auto& st : samples) {
    const auto& s = st.sample;
    double t = s.time - t0_wall;
    reports::Labels base = to_report_labels(s.labels);
    // A hybrid-parallel rank's coordinates identify its series (build_series), not a
    // record: its samples pool over the ranks as a data-parallel job's do, and the
    // per-stage and per-group records come from the step events (parallel_derivation.h).
    for (const char* coordinate : {"tp_rank", "pp_stage", "dp_rank"}) base.erase(coordinate);
    auto add = [&](const std::string& phase) {
      reports::Labels labels = base;
      labels["phase"] = phase;
      auto& g = groups[{s.name, std::move(labels)}];
      if (g.unit.empty()) g.unit = s.unit;
      g.values.push_back(s.value);
    };
    for (const auto& p : phases) {
      if (t >= p.start_s && t < p.end_s) add(p.name);
    }
    add("overall");
  }

  std::vector<reports::MetricRecord> out;
  for (const auto& phase : phase_names) {
    for (const auto& [key, g] : groups) {
      const auto& [name, labels] = key;
      if (reports::label_to_string(labels.at("phase")) != phase) continue;
      const auto* spec = common::find_metric(name);
      auto stats = compute_stats(g.values);
      reports::MetricRecord r;
      r.name = name;
      r.unit = !g.unit.empty() ? g.unit : spec ? std::string(spec->unit) : std::string();
      r.better = spec ? spec->better : common::Better::kNone;
      r.labels = labels;
      r.value = aggregate_value(stats, g.values, spec ? spec->aggregation : common::Aggregation::kMean);
      r.stats = stats;
      out.push_back(r);
      if (name == "comm/latency") {
        for (auto& d : derive_comm_records(labels, g.values)) out.push_back(std::move(d));
      }
    }
  }
  for (auto& r : derive_avg_busbw(out)) out.push_back(std::move(r));
  return out;
}

std::vector<reports::Series> build_series(const std::vector<StoredSample>& samples, double t0_wall,
                                          std::size_t max_points) {
  std::map<GroupKey, reports::Series> groups;
  for (const auto& st : samples) {
    const auto& s = st.sample;
    reports::Labels labels = to_report_labels(s.labels);
    labels["rank"] = static_cast<std::int64_t>(s.rank);
    auto& series = groups[{s.name, labels}];
    if (series.name.empty()) {
      series.name = s.name;
      series.unit = s.unit;
      series.labels = labels;
    }
    series.t.push_back(s.time - t0_wall);
    series.v.push_back(s.value);
  }
  std::vector<reports::Series> out;
  for (auto& [key, series] : groups) {
    if (series.t.size() > max_points) {
      reports::Series thin{series.name, series.unit, series.labels, {}, {}};
      double step = static_cast<double>(series.t.size()) / static_cast<double>(max_points);
      for (std::size_t i = 0; i < max_points; ++i) {
        auto idx = static_cast<std::size_t>(static_cast<double>(i) * step);
        thin.t.push_back(series.t[idx]);
        thin.v.push_back(series.v[idx]);
      }
      series = std::move(thin);
    }
    out.push_back(std::move(series));
  }
  return out;
}

}  // namespace chaosbench::harness
