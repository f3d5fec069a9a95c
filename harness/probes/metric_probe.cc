#include "harness/probes/metric_probe.h"

#include <algorithm>
#include <fmt/format.h>
#include <numeric>

#include "common/values/percentile.h"
#include "harness/probes/probe_support.h"

namespace chaosbench::harness::probes {
namespace {

// How much earlier than the window's start a sample may have been received and still be
// stamped inside it: the receive order follows the wall clock, which NTP may step back,
// and a sender's clock may run ahead of ours. Scanning this much further costs little.
constexpr double kArrivalSlackS = 5.0;

// Numbers compare as numbers (16777216 matches 16777216.0); a string only a string.
bool label_value_matches(const bench::LabelValue& have, const bench::LabelValue& want) {
  auto number = [](const bench::LabelValue& v) -> std::optional<double> {
    if (const auto* i = std::get_if<std::int64_t>(&v)) return static_cast<double>(*i);
    if (const auto* d = std::get_if<double>(&v)) return *d;
    return std::nullopt;
  };
  const auto a = number(have), b = number(want);
  if (a || b) return a && b && *a == *b;
  return have == want;
}

bool has_labels(const bench::Labels& have, const bench::Labels& want) {
  for (const auto& [key, value] : want) {
    auto it = have.find(key);
    if (it == have.end() || !label_value_matches(it->second, value)) return false;
  }
  return true;
}

// "infer/error_rate{replica=1}"
std::string series_name(const ProbeSpec& spec) {
  if (spec.labels.empty()) return spec.metric;
  std::string labels;
  for (const auto& [k, v] : spec.labels) labels += fmt::format("{}{}={}", labels.empty() ? "" : ",", k, bench::label_to_string(v));
  return fmt::format("{}{{{}}}", spec.metric, labels);
}

}  // namespace

double window_statistic(const std::string& stat, std::vector<double>& values, double last) {
  const auto n = static_cast<double>(values.size());
  if (stat == "count") return n;
  if (values.empty()) return std::numeric_limits<double>::quiet_NaN();
  if (stat == "last") return last;
  if (stat == "sum") return std::accumulate(values.begin(), values.end(), 0.0);
  if (stat == "mean") return std::accumulate(values.begin(), values.end(), 0.0) / n;
  if (stat == "min") return *std::min_element(values.begin(), values.end());
  if (stat == "max") return *std::max_element(values.begin(), values.end());
  std::sort(values.begin(), values.end());
  const double p = stat == "p50" ? 50 : stat == "p90" ? 90 : 99;
  return common::percentile_sorted(values, p);
}

MetricProbe::MetricProbe(ProbeSpec spec, const SampleStore* store) : spec_(std::move(spec)), store_(store) {}

ProbeOutcome MetricProbe::evaluate(double now_wall) {
  return guarded([&] {
    if (!store_) return failed("no sample store to read " + spec_.metric + " from");
    const double window_s = std::chrono::duration<double>(spec_.window.value).count();
    const double from = now_wall - window_s;
    values_.clear();
    double last = 0, last_time = -1;
    store_->visit_recent(from - kArrivalSlackS, [&](const StoredSample& s) {
      const auto& sample = s.sample;
      if (sample.time < from || sample.time > now_wall || sample.name != spec_.metric) return;
      if (!has_labels(sample.labels, spec_.labels)) return;
      values_.push_back(sample.value);
      if (sample.time > last_time) {  // newest first: a tie keeps the later arrival
        last_time = sample.time;
        last = sample.value;
      }
    });
    const std::string window = common::to_string(spec_.window);
    const std::size_t count = values_.size();
    if (count > 0) reported_ = true;
    // Before the workload's first report of the series (it is still starting), there is
    // nothing to judge yet: a pass, so a stop condition does not fire at start-up. Once it
    // has reported, silence fails: a system that stopped reporting cannot vouch for
    // itself. A `before` probe must see the series to call the system steady.
    if (count == 0 && spec_.stat != "count" && !reported_ && spec_.mode != ProbeMode::kBefore)
      return ProbeOutcome{true, std::nullopt, fmt::format("no samples of {} yet", series_name(spec_))};
    if (count == 0 && spec_.stat != "count")
      return failed(fmt::format("no samples of {} in the last {}", series_name(spec_), window));
    const double value = window_statistic(spec_.stat, values_, last);
    const std::string violation = bound_violation(value, spec_);
    std::string evidence = fmt::format("{} {} {} over the last {} ({} sample{})", series_name(spec_), spec_.stat,
                                       format_number(value), window, count, count == 1 ? "" : "s");
    if (!violation.empty()) evidence += " " + violation;
    return ProbeOutcome{violation.empty(), value, std::move(evidence)};
  });
}

}  // namespace chaosbench::harness::probes
