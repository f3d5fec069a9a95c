// The history store and gate (reports/history_*.h): percent-encoded store paths, adding
// and reading history.jsonl (duplicates refused, bad lines named by file:line, a torn
// last line), the gate's verdicts on synthetic histories (2 % lognormal run-to-run
// noise), steps it names, tolerances, and the window that a hardware change restarts.
#include <catch2/catch.hpp>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <random>
#include <string>
#include <unistd.h>
#include <vector>

#include "reports/history/history_file.h"
#include "reports/history/history_gate.h"
#include "reports/history/history_store.h"
#include "reports/history/history_trend.h"

namespace history_test {  // this file's names, apart in a unity batch (tests/CMakeLists.txt)

using namespace chaosbench::reports;
namespace fs = std::filesystem;

namespace {

MetricRecord record(const std::string& name, const std::string& unit, const std::string& better, double value) {
  MetricRecord r;
  r.name = name;
  r.unit = unit;
  r.better = chaosbench::common::parse_better(better);
  r.labels = {{"phase", std::string("overall")}};
  r.value = value;
  return r;
}

// A sampled metric: its stats around p50.
MetricRecord step_time(double p50) {
  MetricRecord r = record("train/step_time", "ms", "lower", p50);
  r.stats = Stats{100, p50, 1, p50 * 0.9, p50, p50 * 1.1, p50 * 1.3, p50 * 2, p50 * 100};
  return r;
}

RunResult run_with(const std::string& id, double step_ms, double samples_per_s) {
  RunResult run;
  run.run_id = id;
  run.scenario_name = "demo";
  run.started_at = "2024-05-01T10:00:00Z";
  run.environment.testbed = "ci-small";
  run.environment.cpu_model = "Xeon";
  run.environment.cpus = 2;
  run.environment.git_commit = "c-" + id;
  run.metrics = {step_time(step_ms), record("train/throughput", "samples/s", "higher", samples_per_s),
                 record("fault/effect_error", "%", "lower", 1)};
  return run;
}

// n runs around 100 ms / 1000 samples/s with 2% lognormal noise, times 1 + step from `at` on.
std::vector<HistoryEntry> entries(std::uint64_t seed, std::size_t n, std::size_t at = SIZE_MAX, double step = 0) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<double> normal(0.0, 0.02);
  std::vector<HistoryEntry> out;
  for (std::size_t i = 0; i < n; ++i) {
    const double f = std::exp(normal(rng)) * (i >= at ? 1 + step : 1.0);
    out.push_back(history_entry_of(run_with("run-" + std::to_string(i), 100 * f, 1000 / f)));
  }
  return out;
}

const HistoryRow& row(const HistoryGateResult& r, const std::string& name, const std::string& stat) {
  for (const auto& x : r.rows)
    if (x.key.name == name && x.key.stat == stat) return x;
  FAIL("no row " << name << " " << stat);
  return r.rows.front();
}

struct TempDir {
  fs::path path = fs::temp_directory_path() / ("chaosbench-history-" + std::to_string(::getpid()) + "-" +
                                               std::to_string(std::random_device{}()));
  TempDir() { fs::create_directories(path); }
  ~TempDir() { fs::remove_all(path); }
};

}  // namespace

TEST_CASE("history store: names become one safe path component each", "[history]") {
  CHECK(store_component("ci-small_1.2") == "ci-small_1.2");
  CHECK(store_component("ci/small") == "ci%2Fsmall");
  CHECK(store_component("..") == "%2E.");
  CHECK(store_component(".hidden") == "%2Ehidden");
  CHECK(store_component("a b%") == "a%20b%25");
  for (const std::string name : {"../../etc", "a/../../b", "..", ".", "x\ny", "100%", "é"})
    CHECK(decode_component(store_component(name)) == name);
  CHECK_THROWS_WITH(store_component(std::string(200, '/')), Catch::Contains("too long"));
  CHECK(history_path("/h", "", "") == "/h/unlabelled/unnamed/history.jsonl");
  // Only a leading dot needs encoding: a component holds no "/", so an inner ".." is a name.
  CHECK(history_path("/h", "../x", "../../y") == "/h/%2E.%2Fx/%2E.%2F..%2Fy/history.jsonl");
}

TEST_CASE("history store: add, read back, refuse a run twice", "[history]") {
  TempDir dir;
  const auto path = history_path(dir.path.string(), "ci-small", "demo");
  {
    auto file = HistoryFile::open_for_append(path);
    CHECK(file.entries().empty());
    file.append({history_entry_of(run_with("a", 100, 1000)), history_entry_of(run_with("b", 101, 990))});
    CHECK_THROWS_WITH(file.append({history_entry_of(run_with("a", 1, 1))}), Catch::Contains("already there (line 1)"));
    CHECK_THROWS_WITH(file.append({history_entry_of(run_with("c", 1, 1)), history_entry_of(run_with("c", 1, 1))}),
                      Catch::Contains("added twice"));
  }
  const auto file = HistoryFile::open_for_reading(path);
  REQUIRE(file);
  REQUIRE(file->entries().size() == 2);
  const auto& b = file->entries()[1];
  CHECK(b.run_id == "b");
  CHECK(b.line == 2);
  CHECK(b.environment.testbed == "ci-small");
  CHECK(b.environment.git_commit == "c-b");
  REQUIRE(b.records.size() == 2);  // fault/* is not gated
  CHECK(b.records[0].stats->p50 == 101);
  CHECK(b.records[1].value == 990);
  CHECK_FALSE(HistoryFile::open_for_reading(path + ".missing"));
  const auto listed = list_histories(dir.path.string());
  REQUIRE(listed.size() == 1);
  CHECK(listed[0].testbed == "ci-small");
  CHECK(listed[0].scenario == "demo");
}

TEST_CASE("history store: a bad line is named by file and line, a torn last line is skipped", "[history]") {
  TempDir dir;
  const auto path = history_path(dir.path.string(), "t", "s");
  HistoryFile::open_for_append(path).append({history_entry_of(run_with("a", 100, 1000))});
  const std::string good = history_line(history_entry_of(run_with("b", 100, 1000)));
  auto write = [&](const std::string& text) { std::ofstream(path, std::ios::app) << text; };
  write(good.substr(0, good.size() / 2));  // an add that died halfway
  auto read = HistoryFile::open_for_reading(path);
  REQUIRE(read);
  CHECK(read->entries().size() == 1);
  REQUIRE(read->notes().size() == 1);
  CHECK_THAT(read->notes()[0], Catch::Contains(path + ":2: an incomplete last line"));
  read.reset();
  {
    auto file = HistoryFile::open_for_append(path);  // cuts it off
    file.append({history_entry_of(run_with("b", 100, 1000))});
  }
  CHECK(HistoryFile::open_for_reading(path)->entries().size() == 2);
  CHECK(HistoryFile::open_for_reading(path)->notes().empty());
  const std::vector<std::string> bad_lines{"not json", "[1, 2]", std::string(100, '[') + std::string(100, ']'),
                                          R"({"schema_version": 99, "run_id": "x"})", R"({"schema_version": 1})", good};
  for (const std::string& bad : bad_lines) {
    const auto other = history_path(dir.path.string(), "t", "bad");
    fs::remove(other);
    HistoryFile::open_for_append(other).append({history_entry_of(run_with("b", 100, 1000))});
    std::ofstream(other, std::ios::app) << "\n" << bad << "\n";
    INFO(bad.substr(0, 40));
    CHECK_THROWS_WITH(HistoryFile::open_for_reading(other), Catch::StartsWith(other + ":3: "));
  }
}

TEST_CASE("history store: the file must be a regular file, not a link", "[history]") {
  TempDir dir;
  const auto path = history_path(dir.path.string(), "t", "s");
  fs::create_directories(fs::path(path).parent_path());
  fs::create_symlink("/etc/passwd", path);
  CHECK_THROWS_WITH(HistoryFile::open_for_append(path), Catch::Contains(path));
  CHECK_THROWS(HistoryFile::open_for_reading(path));
  fs::remove(path);
  fs::create_directory(path);
  CHECK_THROWS_WITH(HistoryFile::open_for_reading(path), Catch::Contains("not a regular file"));
}

TEST_CASE("history gate: a 10% regression fails, A/A runs pass", "[history]") {
  const auto h = entries(1, 30);
  auto r = gate_against_history(h, run_with("cur", 110, 1000 / 1.1));
  CHECK(r.verdict == GateStatus::kFail);
  const auto& p50 = row(r, "train/step_time", "p50");
  CHECK(p50.status == GateStatus::kFail);
  CHECK_THAT(p50.reason, Catch::StartsWith("regression: +"));
  REQUIRE(p50.interval);
  CHECK(p50.interval->log_scale);
  CHECK(p50.interval->n == 30);
  CHECK(row(r, "train/throughput", "value").status == GateStatus::kFail);
  CHECK(r.rows.size() == 3);  // p50, p99, value; no fault/* row
  int fails = 0;
  std::mt19937_64 rng(9);
  std::normal_distribution<double> normal(0.0, 0.02);
  for (int i = 0; i < 20; ++i) {
    const double f = std::exp(normal(rng));
    fails += gate_against_history(h, run_with("aa", 100 * f, 1000 / f)).verdict == GateStatus::kFail;
  }
  // One of these 20 draws is 3.6 sigma out (7.8% slower): beyond the tolerance and the
  // interval, a failure the gate owes.
  CHECK(fails <= 1);
}

TEST_CASE("history gate: thin history warns, improvements and small changes pass", "[history]") {
  auto r = gate_against_history(entries(2, 3), run_with("cur", 150, 500));
  CHECK(row(r, "train/step_time", "p50").status == GateStatus::kWarn);
  CHECK_THAT(row(r, "train/step_time", "p50").reason, Catch::StartsWith("too few history runs: 3, need 5"));
  r = gate_against_history({}, run_with("cur", 100, 1000));
  CHECK(row(r, "train/step_time", "p50").reason == "no history for this metric");
  CHECK(r.verdict == GateStatus::kWarn);
  const auto h = entries(3, 30);
  r = gate_against_history(h, run_with("cur", 70, 1500));
  CHECK(r.verdict == GateStatus::kPass);
  CHECK_THAT(row(r, "train/step_time", "p50").reason, Catch::StartsWith("improvement"));
  // 4% slower: outside the interval of 2% noise, but within the 5% tolerance.
  r = gate_against_history(h, run_with("cur", 104.5, 1000));
  CHECK(row(r, "train/step_time", "p50").status == GateStatus::kPass);
  HistoryGateOptions tight;
  tight.default_tolerance = 0.01;
  CHECK(gate_against_history(h, run_with("cur", 108, 1000), tight).verdict == GateStatus::kFail);
  // The scenario's tolerance for the metric wins over the default.
  auto cur = run_with("cur", 112, 1000);
  set_scenario(cur, R"({"checks": [{"metric": "train/step_time", "max": 500, "tolerance": "20%"}]})");
  r = gate_against_history(h, cur);
  CHECK(row(r, "train/step_time", "p50").tolerance == Approx(0.2));
  CHECK(row(r, "train/step_time", "p50").status == GateStatus::kPass);
}

TEST_CASE("history gate: a step in the window warns naming its first run", "[history]") {
  // A 10% slowdown 12 runs ago, accepted since: the current run is at the new level.
  const auto h = entries(4, 30, 18, 0.10);
  const auto r = gate_against_history(h, run_with("cur", 110, 1000 / 1.1));
  const auto& p50 = row(r, "train/step_time", "p50");
  CHECK(p50.status == GateStatus::kWarn);
  REQUIRE(p50.warned_step);
  const auto& step = p50.steps[*p50.warned_step];
  CHECK(step.run_id == "run-18");
  CHECK(step.git_commit == "c-run-18");
  CHECK(step.size == Approx(0.10).margin(0.03));
  CHECK_THAT(p50.reason, Catch::StartsWith("a step at run run-18 (commit c-run-18"));
  // The interval is of the runs since the step, so the current run is no regression.
  CHECK(p50.interval_from == 18);
  CHECK(p50.interval->n == 12);
  // A step that was fixed again does not warn (both found in a 60-run window; in 30 runs
  // binary segmentation misses a 10-run bump of 10% altogether: docs/history.md).
  auto fixed = entries(5, 60, 20, 0.10);
  for (std::size_t i = 40; i < fixed.size(); ++i) fixed[i].records[0].stats->p50 /= 1.10;
  HistoryGateOptions wide;
  wide.window = 60;
  const auto& again = row(gate_against_history(fixed, run_with("cur", 100, 1000), wide), "train/step_time", "p50");
  CHECK(again.steps.size() == 2);
  CHECK_FALSE(again.warned_step);
  CHECK(again.status == GateStatus::kPass);
}

TEST_CASE("history gate: a hardware change under one label starts the window anew", "[history]") {
  auto h = entries(6, 30);
  for (std::size_t i = 24; i < h.size(); ++i) h[i].environment.cpus = 16;
  const auto window = comparable_window(h, 30);
  REQUIRE(window.size() == 6);
  CHECK(window.front()->run_id == "run-24");
  CHECK(comparable_window(h, 4).size() == 4);
  CHECK(comparable_window(entries(7, 40), 30).size() == 30);
}

TEST_CASE("history show: trends per metric with the step found", "[history]") {
  const auto trends = history_trends(entries(8, 40, 25, 0.15), 0, "", {});
  REQUIRE(trends.size() == 3);
  CHECK(trends[0].series.key.name == "train/step_time");
  CHECK(trends[0].series.key.stat == "p50");
  CHECK(trends[0].series.values.size() == 40);
  REQUIRE(trends[0].steps.size() == 1);
  CHECK(trends[0].steps[0].run_id == "run-25");
  CHECK(history_trends(entries(8, 40), 10, "train/", {}).front().series.values.size() == 10);
  CHECK(history_trends(entries(8, 40), 10, "train/throughput", {}).size() == 1);
}

TEST_CASE("history store: mangled lines are refused or read, never a crash", "[history]") {
  const std::string good = history_line(history_entry_of(run_with("a", 100, 1000)));
  std::mt19937_64 rng(11);
  int read = 0, refused = 0;
  for (int round = 0; round < 3000; ++round) {
    std::string line = good;
    const int edits = 1 + static_cast<int>(rng() % 4);
    for (int e = 0; e < edits; ++e) {
      const std::size_t at = rng() % line.size();
      switch (rng() % 3) {
        case 0: line[at] = static_cast<char>(rng() % 256); break;
        case 1: line.erase(at, 1 + rng() % 20); break;
        default: line.insert(at, std::string(1 + rng() % 3, "{}[]\":,0-9e"[rng() % 11])); break;
      }
      if (line.empty()) line = "x";
    }
    try {
      const auto entry = parse_history_line(line);
      CHECK_FALSE(entry.run_id.empty());
      ++read;
    } catch (const std::runtime_error&) {
      ++refused;
    }
  }
  CHECK(read + refused == 3000);
  CHECK(refused > 0);
  // A parseable history of nonsense numbers gives rows, not a crash.
  std::vector<HistoryEntry> odd;
  for (double v : {1e308, -5.0, 0.0, 1e-308, 3.0, 1e308}) odd.push_back(history_entry_of(run_with("o", v, v)));
  const auto r = gate_against_history(odd, run_with("cur", 1e308, -1));
  CHECK(r.rows.size() == 3);
}

}  // namespace history_test
