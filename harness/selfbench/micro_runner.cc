#include "harness/selfbench/micro_runner.h"

#include <chrono>
#include <map>
#include <stdexcept>
#include <unistd.h>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "common/metrics/metric_catalogue.h"
#include "harness/derive/result_builder.h"
#include "harness/core/run_stamps.h"

namespace chaosbench::harness {
namespace {

using bench::micro::MicroBenchmark;
using Run = benchmark::BenchmarkReporter::Run;

// Shows every run on the console reporter and keeps a copy of the plain iteration runs.
class CollectingReporter final : public benchmark::BenchmarkReporter {
 public:
  explicit CollectingReporter(benchmark::BenchmarkReporter& display) : display_(display) {}

  bool ReportContext(const Context& context) override { return display_.ReportContext(context); }
  void ReportRuns(const std::vector<Run>& runs) override {
    display_.ReportRuns(runs);
    for (const auto& run : runs)
      if (run.run_type == Run::RT_Iteration) runs_.push_back(run);
  }
  void Finalize() override { display_.Finalize(); }

  const std::vector<Run>& runs() const { return runs_; }

 private:
  benchmark::BenchmarkReporter& display_;
  std::vector<Run> runs_;
};

// Google Benchmark reads --benchmark_min_time only through its flag parser; any other
// way (MinTime per benchmark) appends "/min_time:..." to every name.
void set_min_time(double seconds) {
  std::vector<std::string> args = {"chaosbench bench micro", fmt::format("--benchmark_min_time={}", seconds)};
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  int argc = static_cast<int>(argv.size());
  benchmark::Initialize(&argc, argv.data());
}

void register_suite(const std::vector<MicroBenchmark>& suite) {
  for (const auto& row : suite) {
    auto* b = benchmark::RegisterBenchmark(row.name.c_str(), row.body)->Unit(row.time_unit);
    if (row.timing == bench::micro::Timing::kManualTime) {
      b->UseManualTime();
    } else {
      b->UseRealTime();  // rates and latencies are wall-clock; CPU time would miss threads and waits
    }
  }
}

std::string suite_description(const MicroRunOptions& options, const std::vector<std::string>& ran) {
  nlohmann::json j = {{"name", "micro"},
                      {"description", "chaosbench bench micro: micro-benchmarks of the machine and of the tool"},
                      {"micro", {{"filter", options.filter}, {"min_time_s", options.min_time}, {"benchmarks", ran}}}};
  return j.dump();
}

}  // namespace

std::optional<double> measured_value(const MicroBenchmark& row, const Run& run) {
  if (row.measure.counter.empty()) return run.GetAdjustedRealTime() * row.measure.scale;
  auto it = run.counters.find(row.measure.counter);
  if (it == run.counters.end()) return std::nullopt;
  return it->second.value * row.measure.scale;
}

reports::MetricRecord micro_record(const MicroBenchmark& row, double value) {
  const common::MetricSpec* spec = common::find_metric(row.metric);
  if (spec == nullptr) throw std::logic_error("micro-benchmark " + row.name + ": metric " + row.metric + " is not in the catalogue");
  reports::MetricRecord record;
  record.name = row.metric;
  record.unit = std::string(spec->unit);
  record.better = spec->better;
  record.labels = row.labels;
  record.labels["phase"] = "overall";
  record.labels["benchmark"] = row.name;
  record.value = value;
  return record;
}

MicroRunOutcome run_micro_suite(const std::vector<MicroBenchmark>& suite, const MicroRunOptions& options,
                                std::ostream& console) {
  MicroRunOutcome out;
  reports::RunResult& r = out.result;
  r.tool_version = CHAOSBENCH_VERSION;
  r.scenario_name = "micro";
  r.run_id = make_run_id();
  r.started_at = utc_timestamp_iso();
  r.environment = describe_environment();
  r.environment.cluster = "in-process";
  r.environment.backends = {{"benchmark", "Google Benchmark"},
                            {"compute", "cpu device (OpenBLAS)"},
                            {"comm", "gloo/tcp loopback"}};
  const auto start = std::chrono::steady_clock::now();

  set_min_time(options.min_time);
  register_suite(suite);
  benchmark::ConsoleReporter display(::isatty(STDOUT_FILENO) ? benchmark::ConsoleReporter::OO_ColorTabular
                                                             : benchmark::ConsoleReporter::OO_Tabular);
  display.SetOutputStream(&console);
  CollectingReporter collector(display);
  try {
    out.matched = benchmark::RunSpecifiedBenchmarks(&collector, options.filter.empty() ? "." : options.filter);
  } catch (...) {
    benchmark::ClearRegisteredBenchmarks();
    throw;
  }
  benchmark::ClearRegisteredBenchmarks();  // frees the fixtures (arrays, gloo pair) now

  std::map<std::string, const MicroBenchmark*> by_name;
  for (const auto& row : suite) by_name[row.name] = &row;
  std::vector<std::string> ran, failures;
  for (const auto& run : collector.runs()) {
    const std::string& name = run.run_name.function_name;
    ran.push_back(name);
    auto it = by_name.find(name);
    if (it == by_name.end()) continue;  // not ours (nothing else registers, but be safe)
    if (run.error_occurred) {
      failures.push_back(fmt::format("{}: {}", name, run.error_message));
      continue;
    }
    auto value = measured_value(*it->second, run);
    if (!value) {
      failures.push_back(fmt::format("{}: counter \"{}\" missing", name, it->second->measure.counter));
      continue;
    }
    r.metrics.push_back(micro_record(*it->second, *value));
  }
  reports::set_scenario(r, suite_description(options, ran));
  r.duration_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  r.verdict = failures.empty() ? reports::Verdict::kPass : reports::Verdict::kFail;
  for (const auto& f : failures) r.reason += (r.reason.empty() ? "" : "; ") + f;
  return out;
}

}  // namespace chaosbench::harness
