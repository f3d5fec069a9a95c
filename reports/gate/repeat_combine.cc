#include "reports/gate/repeat_combine.h"

#include <algorithm>
#include <cmath>
#include <fmt/format.h>
#include <map>
#include <utility>

#include "common/values/percentile.h"
#include "reports/model/judgement.h"

namespace chaosbench::reports {
namespace {

// The median of the finite values (the mean of the middle two of an even count); NaN
// when there are none.
double median_of(const std::vector<double>& values) {
  std::vector<double> finite;
  for (double v : values)
    if (std::isfinite(v)) finite.push_back(v);
  return common::median(std::move(finite));
}

Stats median_stats(const std::vector<Stats>& all) {
  Stats out;
  auto field = [&](double Stats::*f) {
    std::vector<double> v;
    for (const auto& s : all) v.push_back(s.*f);
    return median_of(v);
  };
  for (const auto& s : all) {
    out.n += s.n;
    out.sum += s.sum;
  }
  out.mean = field(&Stats::mean);
  out.stddev = field(&Stats::stddev);
  out.min = field(&Stats::min);
  out.p50 = field(&Stats::p50);
  out.p90 = field(&Stats::p90);
  out.p99 = field(&Stats::p99);
  out.max = field(&Stats::max);
  return out;
}

// One record per name and labels over every run, with each run's figures.
std::vector<MetricRecord> combine_metrics(const std::vector<RunToCombine>& runs) {
  std::vector<MetricRecord> out;
  std::vector<std::vector<Stats>> stats;
  std::map<std::pair<std::string, Labels>, std::size_t> index;
  for (const auto& run : runs) {
    for (const auto& r : run.result.metrics) {
      auto [it, fresh] = index.try_emplace({r.name, r.labels}, out.size());
      if (fresh) {
        out.push_back(r);
        out.back().runs = RunValues{};
        out.back().stats.reset();
        stats.emplace_back();
      }
      auto& rec = out[it->second];
      rec.runs->value.push_back(r.value);
      if (r.stats) {
        rec.runs->p50.push_back(r.stats->p50);
        rec.runs->p99.push_back(r.stats->p99);
        stats[it->second].push_back(*r.stats);
      }
    }
  }
  for (std::size_t i = 0; i < out.size(); ++i) {
    out[i].value = median_of(out[i].runs->value);
    if (!stats[i].empty()) out[i].stats = median_stats(stats[i]);
  }
  return out;
}

// The first run's checks, each re-judged on the median of the value it judged in every
// run that judged the same check (same position, metric and operator).
std::vector<CheckResult> combine_checks(const std::vector<RunToCombine>& runs) {
  std::vector<CheckResult> out = runs.front().result.checks;
  for (std::size_t i = 0; i < out.size(); ++i) {
    auto& c = out[i];
    std::vector<double> values;
    for (const auto& run : runs) {
      const auto& checks = run.result.checks;
      if (i < checks.size() && checks[i].metric == c.metric && checks[i].op == c.op && checks[i].value)
        values.push_back(*checks[i].value);
    }
    if (values.empty()) continue;  // no run judged a value: the first run's failure stands
    const double median = median_of(values);
    c.value = median;
    const bool pass = c.op == ">=" ? median >= c.threshold : median <= c.threshold;
    c.status = pass ? CheckStatus::kPass : CheckStatus::kFail;
    std::string each;
    for (double v : values) each += fmt::format("{}{:.6g}", each.empty() ? "" : ", ", v);
    c.message = fmt::format("{} = {:.6g}, the median of {} run{} ({}){}", c.metric, median, values.size(),
                            values.size() == 1 ? "" : "s", each,
                            pass ? "" : fmt::format("; limit {} {:.6g}", c.op, c.threshold));
  }
  return out;
}

// The runs' verdicts without their failed checks (re-judged on the medians instead).
Judgement combine_verdicts(const std::vector<RunToCombine>& runs) {
  Judgement out;
  for (std::size_t i = 0; i < runs.size(); ++i) {
    const auto& r = runs[i].result;
    if (r.verdict == Verdict::kPass) continue;
    if (r.verdict == Verdict::kFail && r.reason == judge_checks(r.checks).reason) continue;
    out = fold(out, {r.verdict, fmt::format("run {}: {}", i + 1, r.reason)});
  }
  return out;
}

}  // namespace

RunResult combine_runs(const std::vector<RunToCombine>& runs, const std::string& run_id, bool interleaved) {
  RunResult out;
  if (runs.empty()) return out;  // verdict error: nothing ran
  const auto& first = runs.front().result;
  out.tool_name = first.tool_name;
  out.tool_version = first.tool_version;
  set_scenario(out, first.scenario_json);
  out.scenario_name = first.scenario_name;
  out.run_id = run_id;
  out.environment = first.environment;
  out.seed = first.seed;
  out.started_at = first.started_at;
  out.phases = first.phases;
  out.faults = first.faults;
  out.metrics = combine_metrics(runs);
  out.checks = combine_checks(runs);
  RepeatRecord repeat;
  repeat.count = static_cast<int>(runs.size());
  repeat.interleaved = interleaved;
  for (const auto& run : runs) {
    const auto& r = run.result;
    out.duration_s += r.duration_s;
    out.protocol.samples += r.protocol.samples;
    out.protocol.events += r.protocol.events;
    out.protocol.malformed += r.protocol.malformed;
    repeat.runs.push_back({r.run_id, run.dir, r.verdict, r.reason, r.started_at, r.duration_s});
  }
  out.repeat = std::move(repeat);
  judge_result(out, combine_verdicts(runs));
  return out;
}

}  // namespace chaosbench::reports
