#include "harness/selfbench/tool_benchmarks.h"

#include <chrono>
#include <fstream>
#include <memory>
#include <mutex>
#include <sstream>
#include <stdexcept>
#include <thread>

#include <fmt/format.h>

#include "bench/micro/scratch_dir.h"
#include "bench/protocol/metrics_client.h"
#include "bench/protocol/record.h"
#include "harness/collect/metrics_server.h"
#include "harness/collect/sample_store.h"
#include "harness/scenario/scenario_loader.h"
#include "reports/render/html_report.h"
#include "reports/model/json_io.h"
#include "reports/render/junit_report.h"
#include "reports/render/markdown_report.h"
#include "reports/render/trace_report.h"

namespace chaosbench::harness {
namespace {

using bench::micro::MicroBenchmark;

constexpr std::size_t kReportSamples = 1'000'000;
constexpr int kIngestBatch = 10'000;  // records per iteration: one flush, then wait for all
constexpr std::chrono::seconds kIngestTimeout{10};

// A metric record as ranks send them all the time.
bench::Sample typical_sample(int i) {
  return {.rank = i % 4, .time = 1764450000.25 + i * 1e-3, .name = "comm/latency", .value = 812.5 + i % 100,
          .unit = "us", .labels = {{"collective", "allreduce"}, {"bytes", std::int64_t{16777216}}}};
}

class ScenarioText {
 public:
  explicit ScenarioText(std::string file) : file_(std::move(file)) {}
  const std::string& file() const { return file_; }
  const std::string& text() {
    std::call_once(once_, [this] {
      std::ifstream in(file_, std::ios::binary);
      std::ostringstream content;
      content << in.rdbuf();
      if (!in) error_ = "cannot read " + file_ + " (choose one with --scenario)";
      text_ = content.str();
    });
    if (!error_.empty()) throw std::runtime_error(error_);
    return text_;
  }

 private:
  std::once_flag once_;
  std::string file_, text_, error_;
};

void scenario_parse_body(benchmark::State& state, ScenarioText& scenario) {
  const std::string& text = scenario.text();
  for (auto _ : state) {
    auto loaded = parse_scenario(text, scenario.file());
    benchmark::DoNotOptimize(loaded.scenario.name.data());
  }
}

// Through the harness's real path: MetricsClient -> Unix socket -> MetricsServer thread
// (decode) -> SampleStore. An iteration is timed until the server has every record.
void ingest_socket_body(benchmark::State& state) {
  bench::micro::ScratchDir dir("/tmp", "chaosbench-micro-");
  SampleStore store;
  MetricsServer server(dir.path() + "/metrics.sock",
                       [&store](const bench::Record& record, double received_at) { store.add(record, received_at); });
  bench::MetricsClient client(server.address(), 0);
  if (!client.connected()) throw std::runtime_error("cannot connect to " + server.address());
  std::vector<bench::Sample> samples;
  for (int i = 0; i < kIngestBatch; ++i) samples.push_back(typical_sample(i));
  std::uint64_t sent = 0;
  for (auto _ : state) {
    for (const auto& s : samples) client.sample(s.name, s.value, s.unit, s.labels, s.time);
    client.flush();
    sent += samples.size();
    const auto deadline = std::chrono::steady_clock::now() + kIngestTimeout;
    while (server.records() + server.malformed() < sent) {
      if (std::chrono::steady_clock::now() > deadline)
        throw std::runtime_error(fmt::format("the metrics server took {} of {} records in {} s", server.records(),
                                             sent, kIngestTimeout.count()));
      std::this_thread::yield();
    }
  }
  if (server.malformed() != 0) throw std::runtime_error(fmt::format("{} records malformed", server.malformed()));
  state.counters["records"] = benchmark::Counter(static_cast<double>(sent), benchmark::Counter::kIsRate);
}

// decode_record alone, over the lines MetricsClient would write.
void ingest_decode_body(benchmark::State& state) {
  std::vector<std::string> lines;
  for (int i = 0; i < kIngestBatch; ++i) {
    std::string line = bench::encode_record(typical_sample(i));
    line.pop_back();  // the server hands decode_record a line without its newline
    lines.push_back(std::move(line));
  }
  std::uint64_t decoded = 0;
  for (auto _ : state) {
    for (const auto& line : lines) {
      auto result = bench::decode_record(line);
      if (!result.ok) throw std::runtime_error("decode_record: " + result.error);
      benchmark::DoNotOptimize(result);
    }
    decoded += lines.size();
  }
  state.counters["records"] = benchmark::Counter(static_cast<double>(decoded), benchmark::Counter::kIsRate);
}

// The report generators bench/report_time times, one row each. The HTML and Markdown
// reporters (reports/render/html_report.h render_html, reports/render/markdown_report.h render_markdown)
// belong in this table as {"html", ...} and {"markdown", ...} once their implementations
// are in the tree; JUnit and the trace likewise.
struct ReportFormat {
  const char* name;
  std::string (*render)(const reports::RunResult&);
};
const ReportFormat kReportFormats[] = {
    {"json", [](const reports::RunResult& run) { return reports::to_json(run); }},
    {"html", [](const reports::RunResult& run) { return reports::render_html(run); }},
    {"md", [](const reports::RunResult& run) { return reports::render_markdown(run); }},
    {"junit", [](const reports::RunResult& run) { return reports::render_junit(run); }},
    {"trace", [](const reports::RunResult& run) { return reports::render_trace(run); }},
};

class SyntheticRun {
 public:
  const reports::RunResult& run() {
    std::call_once(once_, [this] { run_ = synthetic_run(kReportSamples); });
    return run_;
  }

 private:
  std::once_flag once_;
  reports::RunResult run_;
};

void report_body(benchmark::State& state, SyntheticRun& synthetic, const ReportFormat& format) {
  const auto& run = synthetic.run();
  for (auto _ : state) {
    std::string document = format.render(run);
    benchmark::DoNotOptimize(document.data());
  }
}

}  // namespace

reports::RunResult synthetic_run(std::size_t samples) {
  constexpr int kRanks = 4;
  constexpr double kStepS = 0.05;
  reports::RunResult run;
  run.tool_version = CHAOSBENCH_VERSION;
  run.scenario_name = "synthetic";
  reports::set_scenario(run, R"({"name":"synthetic","workload":{"kind":"train"}})");
  run.run_id = "000000000000";
  run.started_at = "2026-01-01T00:00:00Z";
  run.verdict = reports::Verdict::kPass;
  const std::size_t per_rank = samples / kRanks;
  run.duration_s = static_cast<double>(per_rank) * kStepS;
  const double third = run.duration_s / 3;
  run.phases = {{"baseline", 0, third}, {"fault:slow-link", third, 2 * third}, {"recovery:slow-link", 2 * third, run.duration_s}};
  reports::FaultRecord& fault = run.faults.emplace_back();
  fault.name = "slow-link";
  fault.type = "network.delay";
  fault.targets = {"node3"};
  fault.applied_at_s = third;
  fault.reverted_at_s = 2 * third;
  fault.backend = "netem";
  for (int rank = 0; rank < kRanks; ++rank) {
    reports::Series series;
    series.name = "train/step_time";
    series.unit = "ms";
    series.labels = {{"rank", std::int64_t{rank}}};
    const std::size_t n = per_rank + (rank < static_cast<int>(samples % kRanks) ? 1 : 0);
    series.t.reserve(n);
    series.v.reserve(n);
    for (std::size_t i = 0; i < n; ++i) {
      const double t = static_cast<double>(i) * kStepS;
      series.t.push_back(t);
      // 50 ms steps with a little jitter, slower inside the fault window.
      series.v.push_back(50.0 + static_cast<double>((i * 7919 + rank * 104729) % 1000) * 1e-3 +
                         (t >= third && t < 2 * third ? 5.0 : 0.0));
    }
    run.series.push_back(std::move(series));
    for (const auto& phase : run.phases) {
      reports::MetricRecord& record = run.metrics.emplace_back();
      record.name = "train/step_time";
      record.unit = "ms";
      record.better = common::Better::kLower;
      record.labels = {{"phase", phase.name}, {"rank", std::int64_t{rank}}};
      record.value = 50.5;
    }
  }
  for (int i = 0; i < 100; ++i)
    run.events.push_back({.t = i * run.duration_s / 100, .rank = i % kRanks, .name = "checkpoint_saved",
                          .fields = {{"step", std::int64_t{i * 50}}}});
  return run;
}

std::vector<MicroBenchmark> tool_benchmarks(const std::string& scenario_file) {
  std::vector<MicroBenchmark> rows;
  // Field by field: g++ 12 warns (maybe-uninitialized) on designated-initializer temporaries here.
  const auto add = [&rows](std::string name, std::string metric, bench::Labels labels, bench::micro::Measure measure,
                           benchmark::TimeUnit unit, std::function<void(benchmark::State&)> body) {
    MicroBenchmark& row = rows.emplace_back();
    row.name = std::move(name);
    row.metric = std::move(metric);
    row.labels = std::move(labels);
    row.measure = std::move(measure);
    row.time_unit = unit;
    row.body = bench::micro::guarded(std::move(body));
  };
  auto scenario = std::make_shared<ScenarioText>(scenario_file);
  add("bench/scenario_parse", "bench/scenario_parse", {{"file", scenario_file}}, {"", 1}, benchmark::kMicrosecond,
      [scenario](benchmark::State& state) { scenario_parse_body(state, *scenario); });
  add("bench/ingest_rate/path:socket", "bench/ingest_rate", {{"path", "socket"}, {"batch", std::int64_t{kIngestBatch}}},
      {"records", 1}, benchmark::kMillisecond, ingest_socket_body);
  add("bench/ingest_rate/path:decode", "bench/ingest_rate", {{"path", "decode"}, {"batch", std::int64_t{kIngestBatch}}},
      {"records", 1}, benchmark::kMillisecond, ingest_decode_body);
  auto synthetic = std::make_shared<SyntheticRun>();
  for (const auto& format : kReportFormats) {
    add(fmt::format("bench/report_time/format:{}", format.name), "bench/report_time",
        {{"format", format.name}, {"samples", static_cast<std::int64_t>(kReportSamples)}}, {"", 1},
        benchmark::kMillisecond,
        [synthetic, &format](benchmark::State& state) { report_body(state, *synthetic, format); });
  }
  return rows;
}

}  // namespace chaosbench::harness
