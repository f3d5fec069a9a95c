// Probes and aborts on the reports' side: results.json keeps them (and older files read as
// having none), the verdict fold and the exit code treat "aborted" as docs/probes.md says, every
// reporter shows the abort with its evidence and the probes' track, and the derivation
// turns the records into probe/failures and fault/abort_latency.
#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "harness/core/exit_code.h"
#include "harness/derive/probe_derivation.h"
#include "report_fixtures.h"
#include "reports/render/console_summary.h"
#include "reports/render/html_report.h"
#include "reports/model/json_io.h"
#include "reports/model/judgement.h"
#include "reports/render/junit_report.h"
#include "reports/render/markdown_report.h"
#include "reports/model/probe_spans.h"
#include "reports/render/trace_report.h"
#include "test_util.h"

namespace probe_report_test {  // this file's names, apart in a unity batch (tests/CMakeLists.txt)

using namespace chaosbench::reports;
using chaosbench::test::aborted_run;
using chaosbench::test::occurrences;
using nlohmann::json;

TEST_CASE("probes: results.json keeps probes, transitions and the abort", "[report][report-probes]") {
  const auto run = aborted_run();
  const auto back = from_json(to_json(run));
  REQUIRE(back.probes.size() == 2);
  const auto& p = back.probes[0];
  CHECK(p.name == "error-rate");
  CHECK(p.kind == "metric");
  CHECK(p.mode == "continuous");
  CHECK(p.evaluations == 9);
  CHECK(p.failures == 4);
  REQUIRE(p.transitions.size() == 2);
  CHECK(p.transitions[1].t == 6.0);
  CHECK_FALSE(p.transitions[1].ok);
  CHECK(p.transitions[1].value == 12.5);
  CHECK(p.transitions[1].evidence == run.probes[0].transitions[1].evidence);
  REQUIRE(back.probes[1].transitions.size() == 1);
  CHECK_FALSE(back.probes[1].transitions[0].value.has_value());  // written as null
  REQUIRE(back.abort);
  CHECK(back.abort->cause == "error-rate");
  CHECK(back.abort->evidence == run.abort->evidence);
  CHECK(back.abort->decided_s == 9.0);
  CHECK(back.abort->reverted_s == 9.12);
  CHECK(back.verdict == Verdict::kAborted);
}

TEST_CASE("probes: a results.json from before probes reads as none, a damaged one as what can be read", "[report][report-probes]") {
  auto old = json::parse(to_json(chaosbench::test::golden_run()));
  old.erase("probes");
  old.erase("abort");
  auto r = from_json(old.dump());
  CHECK(r.probes.empty());
  CHECK_FALSE(r.abort);
  // A run without an abort writes no "abort" key; null or a mistyped one reads as none.
  CHECK_FALSE(json::parse(to_json(r)).contains("abort"));
  CHECK(json::parse(to_json(r))["probes"] == json::array());
  old["abort"] = nullptr;
  old["probes"] = {{{"name", "p"}, {"transitions", {{{"t", "soon"}, {"ok", false}}, 7}}}, "not a probe"};
  r = from_json(old.dump());
  CHECK_FALSE(r.abort);
  REQUIRE(r.probes.size() == 2);
  REQUIRE(r.probes[0].transitions.size() == 2);
  CHECK(r.probes[0].transitions[0].t == 0);
  CHECK_FALSE(r.probes[0].transitions[0].ok);
  old["abort"] = {{"cause", "kill switch"}, {"decided_s", 3}};
  r = from_json(old.dump());
  REQUIRE(r.abort);
  CHECK(r.abort->cause == "kill switch");
  CHECK_FALSE(r.abort->reverted_s);
}

TEST_CASE("probes: the verdict fold with aborted, and its exit code", "[report][report-probes]") {
  const Judgement pass{}, fail{Verdict::kFail, "f"}, error{Verdict::kError, "e"}, aborted{Verdict::kAborted, "a"},
      aborted2{Verdict::kAborted, "a2"}, interrupted{Verdict::kInterrupted, "i"};
  CHECK(fold(pass, aborted).verdict == Verdict::kAborted);
  CHECK(fold(fail, aborted).reason == "a");   // an abort explains a failure before it
  CHECK(fold(error, aborted).reason == "a");
  CHECK(fold(aborted, fail).reason == "a");   // and everything after it
  CHECK(fold(aborted, aborted2).reason == "a");  // the first abort stands
  CHECK(fold(aborted, interrupted).verdict == Verdict::kInterrupted);
  CHECK(fold(interrupted, aborted).verdict == Verdict::kInterrupted);
  // Failed checks or a failed gate never turn an aborted run into a failed one.
  CHECK(fold(aborted, judge_checks({{"m", {}, "<=", 1, 2.0, CheckStatus::kFail, "m too high"}})).verdict == Verdict::kAborted);

  using namespace chaosbench::harness;
  CHECK(exit_code_for(Verdict::kAborted) == 4);
  CHECK(exit_code_for(Verdict::kAborted, VerdictSource::kStored) == 4);
  CHECK(exit_code_for(Verdict::kAborted, VerdictSource::kHostLimit) == 4);
  CHECK(exit_code_for(parse_verdict(to_string(Verdict::kAborted)), VerdictSource::kStored) == 4);
  CHECK(to_string(Verdict::kAborted) == "aborted");
}

TEST_CASE("probes: JUnit reports an abort as the run's error, with cause and evidence", "[report][report-probes]") {
  auto xml = render_junit(aborted_run());
  CHECK_THAT(xml, Catch::Contains(R"(<testsuites name="chaosbench" tests="2" failures="0" errors="1" skipped="0")"));
  CHECK_THAT(xml, Catch::Contains(R"(name="run" time="0">)"));
  CHECK_THAT(xml, Catch::Contains(R"(<error message="aborted by error-rate: infer/error_rate mean 41% over 3s &gt; max 5% &lt;&amp;&gt;" type="abort">)"));
  CHECK_THAT(xml, Catch::Contains("decided at: 9.000 s&#10;faults reverted at: 9.120 s"));
  CHECK(occurrences(xml, "<failure") == 0);
  CHECK_THAT(xml, Catch::Contains(R"(<property name="verdict" value="aborted"/>)"));
}

TEST_CASE("probes: Markdown and the console say why the run stopped", "[report][report-probes]") {
  const auto run = aborted_run();
  auto md = render_markdown(run);
  CHECK_THAT(md, Catch::StartsWith("# chaosbench: serve-abort — ABORTED\n\n**ABORTED**: aborted by error-rate"));
  CHECK_THAT(md, Catch::Contains("\n\nAborted: error-rate — infer/error_rate mean 41% over 3s &gt; max 5% &lt;&&gt; at 9.00 s; "
                                 "faults reverted at 9.12 s\n"));
  CHECK_THAT(md, Catch::Contains("## Probes"));
  CHECK_THAT(md, Catch::Contains("| error-rate | metric | continuous | 9 | 4 | 6.00 s: infer/error_rate"));
  CHECK_THAT(md, Catch::Contains("| health | http | continuous | 9 | 0 | – |"));

  auto text = console_summary(run, "/out");
  CHECK_THAT(text, Catch::Contains("serve-abort — ABORTED in 9.5s"));
  CHECK_THAT(text, Catch::Contains("  aborted: error-rate — infer/error_rate mean 41% over 3s > max 5% <&> at 9.00 s; faults reverted at 9.12 s"));
  CHECK_THAT(text, Catch::Contains("4 of 9 evaluations failed (last at 6.00s"));
  CHECK_THAT(text, Catch::Contains("0 of 9 evaluations failed\n"));
}

TEST_CASE("probes: report.html has the aborted verdict, the banner and a lane per probe", "[report][report-probes]") {
  auto run = aborted_run();
  auto html = render_html(run);
  CHECK_THAT(html, Catch::Contains(R"(<div class="verdict aborted"><span class="big">ABORTED</span>)"));
  CHECK_THAT(html, Catch::Contains(R"(<div class="abort-banner"><strong>Aborted by error-rate</strong> at 9.00 s: )"
                                   "infer/error_rate mean 41% over 3s &gt; max 5% &lt;&amp;&gt;<br>Every fault was reverted "
                                   "at 9.12 s (120 ms after the decision)</div>"));
  CHECK(occurrences(html, "class=\"lane\"") == 3);  // the faults, then each probe
  CHECK(occurrences(html, "class=\"stretch pass\"") == 2);
  CHECK(occurrences(html, "class=\"stretch fail\"") == 1);
  // The failing stretch runs from 6 s to the end of the run (9.5 s), its evidence as tooltip.
  CHECK_THAT(html, Catch::Contains(R"(style="left:63.16%;width:36.84%" title="FAIL 6.00 s – 9.50 s, value 12.5: infer/error_rate)"));
  CHECK(occurrences(html, "class=\"abort-mark\" style=\"left:94.74%\"") == 3);
  CHECK_THAT(html, Catch::Contains(R"("abort":{"label":"abort: error-rate","t":9.0})"));
  const std::size_t scripts = occurrences(html, "<script");

  run.probes.clear();
  run.abort.reset();
  run.verdict = Verdict::kPass;
  html = render_html(run);
  CHECK(occurrences(html, "class=\"lane\"") == 0);
  CHECK(occurrences(html, "abort-banner\">") == 0);
  CHECK_THAT(html, Catch::Contains(R"("abort":null)"));
  CHECK(occurrences(html, "<script") == scripts);  // the lanes add no script
}

TEST_CASE("probes: trace.json has a probes track and the abort", "[report][report-probes]") {
  auto trace = json::parse(render_trace(aborted_run()));
  std::map<int, std::string> threads;
  std::vector<json> spans, instants;
  for (const auto& e : trace["traceEvents"]) {
    if (e["pid"] != 3) continue;
    if (e["ph"] == "M" && e["name"] == "process_name") CHECK(e["args"]["name"] == "probes");
    if (e["ph"] == "M" && e["name"] == "thread_name") threads[e["tid"]] = e["args"]["name"];
    if (e["ph"] == "X") spans.push_back(e);
    if (e["ph"] == "i") instants.push_back(e);
  }
  CHECK(threads == std::map<int, std::string>{{0, "abort"}, {1, "error-rate"}, {2, "health"}});
  REQUIRE(spans.size() == 4);  // pass and FAIL of error-rate, pass of health, reverting faults
  CHECK(spans[1]["name"] == "FAIL");
  CHECK(spans[1]["ts"] == 6e6);
  CHECK(spans[1]["dur"] == 3.5e6);
  CHECK(spans[1]["args"]["value"] == 12.5);
  CHECK(spans[3]["name"] == "reverting faults");
  CHECK(spans[3]["dur"].get<double>() == Approx(120000));
  REQUIRE(instants.size() == 1);
  CHECK(instants[0]["s"] == "g");
  CHECK(instants[0]["ts"] == 9e6);
  CHECK(instants[0]["args"]["cause"] == "error-rate");
}

TEST_CASE("probes: spans from transitions", "[report][report-probes]") {
  ProbeRecord p{"p", "http", "after", 3, 1, {{5, true, std::nullopt, "ok"}, {2, false, 1.0, "down"}, {12, true, {}, "late"}}};
  auto spans = probe_spans(p, 10);
  REQUIRE(spans.size() == 3);
  CHECK((spans[0].start_s == 2 && spans[0].end_s == 5 && !spans[0].ok && spans[0].evidence == "down"));
  CHECK((spans[1].start_s == 5 && spans[1].end_s == 12 && spans[1].ok));
  CHECK((spans[2].start_s == 12 && spans[2].end_s == 12));  // after the end: empty, not negative
  CHECK(probe_spans(ProbeRecord{}, 10).empty());
}

TEST_CASE("probes: probe/failures and fault/abort_latency from the records", "[report][report-probes]") {
  const auto run = aborted_run();
  auto records = chaosbench::harness::probe_metrics(run.probes, run.abort);
  REQUIRE(records.size() == 3);
  CHECK(records[0].name == "probe/failures");
  CHECK(records[0].unit == "count");
  CHECK(records[0].better == chaosbench::common::Better::kLower);
  CHECK(records[0].labels == Labels{{"phase", std::string("overall")}, {"probe", std::string("error-rate")}});
  CHECK(records[0].value == 4);
  CHECK(records[1].value == 0);
  CHECK(records[2].name == "fault/abort_latency");
  CHECK(records[2].unit == "ms");
  CHECK(records[2].labels == Labels{{"phase", std::string("overall")}});
  CHECK(records[2].value == Approx(120));

  CHECK(chaosbench::harness::probe_metrics({}, std::nullopt).empty());
  // No revert after the decision (nothing was active): no latency to report.
  CHECK(chaosbench::harness::probe_metrics({}, AbortRecord{"kill switch", "chaosbench stop", 3, std::nullopt}).empty());
  CHECK(chaosbench::harness::probe_metrics({}, AbortRecord{"kill switch", "", 3, 2.9}).at(0).value == 0);
}

}  // namespace probe_report_test
