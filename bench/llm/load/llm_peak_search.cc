#include "bench/llm/load/llm_peak_search.h"

#include <fmt/format.h>

#include <cstdio>
#include <stdexcept>

namespace chaosbench::bench::llm {
namespace {

struct Stopped {};  // thrown through find_peak to end the search early

void report_end(const PeakResult& r, MetricsClient& metrics) {
  common::Labels fields{{"stop", to_string(r.stop)}, {"trials", static_cast<std::int64_t>(r.trials.size())}};
  if (r.highest_passing) {
    metrics.sample("infer/peak_rate", *r.highest_passing, "req/s", {{"bound", std::string("low")}});
    fields["low"] = *r.highest_passing;
  }
  if (r.lowest_failing) {
    metrics.sample("infer/peak_rate", *r.lowest_failing, "req/s", {{"bound", std::string("high")}});
    fields["high"] = *r.lowest_failing;
  }
  metrics.event("llm_peak", std::move(fields));
  metrics.flush();
}

}  // namespace

PeakResult run_llm_peak_search(const LlmLoadPlan& plan, MetricsClient& metrics, const std::atomic<bool>& stop) {
  if (!plan.settings.find_peak) throw std::invalid_argument("run_llm_peak_search: no find_peak settings");
  const auto& p = *plan.settings.find_peak;
  FindPeakOptions options;
  options.start_rate = p.start_rate;
  options.target_attainment = p.target_attainment;
  options.relative_precision = p.precision;
  options.max_trials = static_cast<std::size_t>(p.max_trials);
  std::vector<PeakTrial> done;
  auto trial = [&](double rate) -> std::optional<double> {
    if (stop.load()) throw Stopped{};
    LlmLoadPlan t = plan;
    t.settings.arrival = Arrival::kPoisson;
    t.settings.rate = rate;
    t.settings.duration = p.trial;
    t.settings.find_peak.reset();
    t.send_samples = false;
    t.seed = plan.seed + done.size();
    LlmLoadGenerator generator(std::move(t), metrics, stop);
    const auto attainment = generator.run().attainment();
    if (stop.load()) throw Stopped{};  // a cut trial is no evidence
    const bool passed = attainment && *attainment >= p.target_attainment;
    done.push_back({rate, attainment, passed});
    common::Labels fields{{"rate", rate}, {"passed", std::int64_t{passed ? 1 : 0}}};
    if (attainment) fields["attainment"] = *attainment;
    metrics.event("llm_peak_trial", std::move(fields));
    metrics.flush();
    std::fprintf(stderr, "llm-load: find-peak trial %zu at %.4g req/s: attainment %s, %s\n", done.size(), rate,
                 attainment ? fmt::format("{:.2f} %", *attainment).c_str() : "none", passed ? "passed" : "failed");
    return attainment;
  };
  PeakResult result;
  try {
    result = find_peak(trial, options);
  } catch (const Stopped&) {
    result.stop = PeakStop::kStopped;
    result.trials = done;
    for (const auto& t : done) {
      if (t.passed && (!result.highest_passing || t.rate > *result.highest_passing)) result.highest_passing = t.rate;
      if (!t.passed && (!result.lowest_failing || t.rate < *result.lowest_failing)) result.lowest_failing = t.rate;
    }
  }
  report_end(result, metrics);
  return result;
}

std::string describe_peak(const PeakResult& r) {
  auto rate = [](const std::optional<double>& v) { return v ? fmt::format("{:.4g}", *v) : std::string("?"); };
  return fmt::format("peak: between {} and {} req/s ({}, {} trials)", rate(r.highest_passing), rate(r.lowest_failing),
                     to_string(r.stop), r.trials.size());
}

}  // namespace chaosbench::bench::llm
