// summary.md, the GitHub annotations, junit.xml and trace.json: golden files for a fixed
// run (tests/golden/; CHAOSBENCH_UPDATE_GOLDEN=1 rewrites them), then the properties the
// formats must keep for any run: valid JSON with the expected tracks, counted testcases,
// escaping, size limits.
#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "report_fixtures.h"
#include "reports/model/json_io.h"
#include "reports/render/junit_report.h"
#include "reports/render/markdown_report.h"
#include "reports/render/trace_report.h"
#include "test_util.h"

namespace report_formats_test {  // this file's names, apart in a unity batch (tests/CMakeLists.txt)

using namespace chaosbench::reports;
using chaosbench::test::check_golden;
using chaosbench::test::golden_run;
using chaosbench::test::occurrences;
using nlohmann::json;

namespace {

// The value of attribute `name` in the first element that starts with `tag`.
std::string attribute(const std::string& xml, const std::string& tag, const std::string& name) {
  auto at = xml.find(tag);
  if (at == std::string::npos) return "";
  auto from = xml.find(" " + name + "=\"", at);
  if (from == std::string::npos) return "";
  from += name.size() + 3;
  return xml.substr(from, xml.find('"', from) - from);
}

// tests/golden/PREFIX{summary.md, junit.xml, trace.json, results.json} for `run`.
void check_goldens(const std::string& prefix, const RunResult& run) {
  check_golden(prefix + "summary.md", render_markdown(run));
  check_golden(prefix + "junit.xml", render_junit(run));
  check_golden(prefix + "trace.json", render_trace(run));
  // results.json: the run model itself, and what every report is regenerated from.
  const std::string results = chaosbench::reports::to_json(run) + "\n";
  check_golden(prefix + "results.json", results);
  CHECK(chaosbench::reports::to_json(chaosbench::reports::from_json(results)) + "\n" == results);
}

CheckResult failing_check(const std::string& metric, const std::string& message) {
  return {metric, {{"phase", std::string("overall")}}, "<=", 1, 2.0, CheckStatus::kFail, message};
}

}  // namespace

TEST_CASE("report formats: golden files for a fixed run", "[report-formats]") { check_goldens("", golden_run()); }

TEST_CASE("report formats: golden files for a run stopped by its abort", "[report-formats]") {
  check_goldens("aborted_", chaosbench::test::aborted_run());
}

TEST_CASE("report formats: trace.json is valid JSON with rank, harness and fault tracks", "[report-formats]") {
  auto trace = json::parse(render_trace(golden_run()));
  REQUIRE(trace["displayTimeUnit"] == "ms");
  const auto& events = trace["traceEvents"];
  std::map<std::pair<int, int>, std::string> threads;
  std::map<int, std::string> processes;
  std::map<std::string, const json*> steps;  // "tid/name" -> the step event
  int instants = 0;
  for (const auto& e : events) {
    if (e["ph"] == "M" && e["name"] == "process_name") processes[e["pid"]] = e["args"]["name"];
    if (e["ph"] == "M" && e["name"] == "thread_name") threads[{e["pid"], e["tid"]}] = e["args"]["name"];
    if (e["ph"] == "i") ++instants;
  }
  CHECK(processes == std::map<int, std::string>{{1, "ranks"}, {2, "faults"}});
  CHECK(threads == std::map<std::pair<int, int>, std::string>{
                       {{1, 0}, "harness"}, {{1, 1}, "rank 0"}, {{1, 2}, "rank 1"}, {{2, 1}, "slow-link"}});
  CHECK(instants == 6);

  // Per rank: 3 steps, each with compute and exposed comm inside it.
  for (int tid : {1, 2}) {
    std::vector<const json*> step, child;
    for (const auto& e : events) {
      if (e["ph"] != "X" || e["pid"] != 1 || e["tid"] != tid) continue;
      (e["cat"] == "step" ? step : child).push_back(&e);
    }
    REQUIRE(step.size() == 3);
    CHECK(child.size() == 6);
    for (const auto* c : child) {
      bool inside = false;
      for (const auto* s : step)
        inside |= (*c)["ts"].get<double>() >= (*s)["ts"].get<double>() &&
                  (*c)["ts"].get<double>() + (*c)["dur"].get<double>() <=
                      (*s)["ts"].get<double>() + (*s)["dur"].get<double>() + 1e-6;
      CHECK(inside);
    }
    // [t - step_time, t] in microseconds.
    CHECK((*step[0])["ts"].get<double>() == Approx(500000));
    CHECK((*step[0])["dur"].get<double>() == Approx(100000));
  }
  // Rank 0 restored step 1 at 1.65 s: its next step is step 2 again; rank 1 counts on.
  std::vector<std::string> names;
  for (const auto& e : events)
    if (e["ph"] == "X" && e["cat"] == "step") names.push_back(std::to_string(e["tid"].get<int>()) + " " + e["name"].get<std::string>());
  CHECK(names == std::vector<std::string>{"1 step 1", "1 step 2", "1 step 2", "2 step 1", "2 step 2", "2 step 3"});
  // The fault window.
  bool window = false;
  for (const auto& e : events)
    window |= e["ph"] == "X" && e["pid"] == 2 && e["ts"] == 1e6 && e["dur"] == 1e6 && e["args"]["type"] == "network.delay";
  CHECK(window);
}

TEST_CASE("report formats: trace.json of a collective benchmark and of odd names", "[report-formats]") {
  RunResult run;
  run.duration_s = 2;
  Labels labels = {{"collective", std::string("allreduce")}, {"algorithm", std::string("ring")},
                   {"bytes", std::int64_t{4096}}, {"rank", std::int64_t{1}}};
  run.series.push_back({"comm/latency", "us", labels, {1.0, 1.001}, {200, 400}});
  FaultRecord f;
  f.name = "bad \"name\"\n\xff";  // quotes, a newline and invalid UTF-8
  f.type = "node.kill";
  f.applied_at_s = 0.5;  // never reverted: the window runs to the end
  f.reversible = false;
  run.faults = {f};
  auto trace = json::parse(render_trace(run));
  std::vector<json> iterations, windows;
  for (const auto& e : trace["traceEvents"]) {
    if (e["ph"] == "X" && e["pid"] == 1) iterations.push_back(e);
    if (e["ph"] == "X" && e["pid"] == 2) windows.push_back(e);
  }
  REQUIRE(iterations.size() == 2);
  CHECK(iterations[0]["name"] == "allreduce ring 4 KiB");
  CHECK(iterations[0]["tid"] == 2);
  CHECK(iterations[0]["ts"].get<double>() == Approx(1e6 - 100));  // centred on t
  CHECK(iterations[1]["dur"].get<double>() == Approx(400));
  REQUIRE(windows.size() == 1);
  CHECK(windows[0]["dur"].get<double>() == Approx(1.5e6));
}

TEST_CASE("report formats: junit.xml counts testcases, failures and warnings", "[report-formats]") {
  auto xml = render_junit(golden_run());
  // 2 checks + 3 gated metrics; the failing check, the failing gate; the warning skipped.
  CHECK(occurrences(xml, "<testcase ") == 5);
  CHECK(occurrences(xml, "<failure ") == 2);
  CHECK(occurrences(xml, "<skipped ") == 1);
  CHECK(attribute(xml, "<testsuite ", "tests") == "5");
  CHECK(attribute(xml, "<testsuite ", "failures") == "2");
  CHECK(attribute(xml, "<testsuite ", "skipped") == "1");
  CHECK(attribute(xml, "<testsuite ", "name") == "golden");
  CHECK_THAT(xml, Catch::Contains("name=\"train/step_time {phase=fault:slow-link} &lt;= 150\""));
  CHECK_THAT(xml, Catch::Contains("name=\"gate: train/step_time {phase=overall} p50\""));
  // No raw markup from a message.
  CHECK_THAT(xml, Catch::Contains("&quot;&lt;worse&gt;&quot; &amp; more)&#10;second line"));
  CHECK(occurrences(xml, "<worse>") == 0);
  CHECK(occurrences(xml, "<") == occurrences(xml, ">"));

  SECTION("duplicate names get a suffix") {
    RunResult run;
    run.scenario_name = "dup";
    run.verdict = Verdict::kFail;
    run.checks = {failing_check("m", "a"), failing_check("m", "b"), failing_check("m", "c")};
    auto dup = render_junit(run);
    CHECK(occurrences(dup, "name=\"m {phase=overall} &lt;= 1\"") == 1);
    CHECK(occurrences(dup, "name=\"m {phase=overall} &lt;= 1 #2\"") == 1);
    CHECK(occurrences(dup, "name=\"m {phase=overall} &lt;= 1 #3\"") == 1);
  }
  SECTION("a run that errored is a failing testcase even without checks") {
    RunResult run;
    run.scenario_name = "broken";
    run.verdict = Verdict::kError;
    run.reason = "rank 0 exited with 1";
    auto broken = render_junit(run);
    CHECK(occurrences(broken, "<testcase ") == 1);
    CHECK_THAT(broken, Catch::Contains("<error message=\"rank 0 exited with 1\" type=\"run\">"));
    CHECK(attribute(broken, "<testsuite ", "errors") == "1");
  }
}

TEST_CASE("report formats: summary.md sections, deltas and the size limit", "[report-formats]") {
  auto md = render_markdown(golden_run());
  CHECK_THAT(md, Catch::StartsWith("# chaosbench: golden — FAIL\n"));
  CHECK_THAT(md, Catch::Contains("## Failed checks (1 of 2)"));
  CHECK_THAT(md, Catch::Contains("(100% \\| \"&lt;worse&gt;\" & more) second line"));
  CHECK_THAT(md, Catch::Contains("+30.0% [+28.0%, +32.0%] FAIL (overall p50)"));
  CHECK_THAT(md, Catch::Contains("## Baseline gate: FAIL"));
  CHECK_THAT(md, Catch::Contains("| slow-link | network.delay | node1 | 1.00 s → 2.00 s | nfqueue |"));
  CHECK_THAT(md, Catch::Contains("## Tuning advice"));

  RunResult big;
  big.scenario_name = "big";
  big.verdict = Verdict::kFail;
  for (int i = 0; i < 20000; ++i) {
    big.metrics.push_back({"comm/busbw", "GB/s", chaosbench::common::Better::kHigher, {{"phase", std::string("overall")}, {"bytes", std::int64_t{i}}}, 1.0, {}});
    big.checks.push_back(failing_check("comm/busbw", std::string(100, 'x')));
  }
  auto large = render_markdown(big);
  CHECK(large.size() < 1024 * 1024);
  CHECK_THAT(large, Catch::Contains("50 of 20000 failed checks shown"));
  CHECK_THAT(large, Catch::Contains("150 of 20000 metric rows shown"));
}

TEST_CASE("report formats: GitHub annotations escape and stop at 10", "[report-formats]") {
  RunResult run;
  run.verdict = Verdict::kFail;
  run.checks.push_back(failing_check("train/loss", "100% worse\r\nsee: log"));
  run.checks.push_back({"train/loss", {}, ">=", 1, std::nullopt, CheckStatus::kPass, "fine"});
  auto lines = github_annotations(run, "scenarios/a,b:c.json");
  REQUIRE(lines.size() == 1);
  CHECK(lines[0] == "::error file=scenarios/a%2Cb%3Ac.json,title=chaosbench check::train/loss {phase=overall} <= 1: 100%25 worse%0D%0Asee: log");

  for (int i = 0; i < 11; ++i) run.checks.push_back(failing_check("m" + std::to_string(i), "x"));
  lines = github_annotations(run, "s.json");
  REQUIRE(lines.size() == 11);
  CHECK(lines[9].starts_with("::error file=s.json,title=chaosbench check::m8 "));
  CHECK(lines[10] == "::warning::2 more failed checks");
}

}  // namespace report_formats_test
