// report.html: structure, escaping, size for 10^6 samples, downsampling, the per-fault
// table, and real renders in headless Chromium (no console error, no blocked request, no
// part wider than a 1280 px window; the pages and their screenshots are kept in the build
// directory: report-sample.html and report-screenshot.png, and report-10-faults.html and
// report-10-faults.png for a run of 10 faults).
#include <catch2/catch.hpp>

#include <chrono>
#include <cmath>
#include <filesystem>
#include <fstream>

#include "reports/html/downsample.h"
#include "reports/html/rank_heatmap.h"
#include "reports/html_report.h"
#include "reports/json_io.h"
#include "report_fixtures.h"
#include "test_util.h"

using namespace chaosbench::reports;
using chaosbench::test::occurrences;
namespace fs = std::filesystem;

namespace {

const char* kNasty = "</script><b>";

MetricRecord record(const std::string& name, const std::string& unit, const std::string& phase, double value,
                    Labels extra = {}) {
  extra["phase"] = phase;
  MetricRecord m{name, unit, "lower", extra, value, {}};
  m.stats = Stats{40, value, 1, value * 0.5, value, value * 1.5, value * 2, value * 3, value * 40};
  return m;
}

// Two ranks stepping through baseline, a slow-link window and recovery; rank 1 is slow in
// the window. `points` samples per series.
RunResult synthetic_run(std::size_t points) {
  RunResult run;
  run.tool_version = "0.1.0";
  run.scenario_name = "html-test";
  set_scenario(run, R"({"name":"html-test","workload":{"kind":"train"}})");
  run.run_id = "html-test-1";
  run.seed = 7;
  run.started_at = "2026-11-30T00:00:00Z";
  run.duration_s = 30;
  run.verdict = Verdict::kFail;
  run.reason = "1 of 2 checks failed";
  run.environment.host = "host";
  run.environment.kernel = "Linux 6";
  run.environment.cpus = 2;
  run.environment.cluster = "network namespaces";
  run.environment.backends = {{"network.delay", "nfqueue"}};
  run.phases = {{"baseline", 0, 10}, {"fault:slow-link", 10, 20}, {"recovery:slow-link", 20, 30}};
  run.faults = {FaultRecord{.name = "slow-link", .type = "network.delay", .targets = {"node1"}, .applied_at_s = 10,
                             .reverted_at_s = 20, .backend = "nfqueue", .apply_latency_us = 180, .effect = {},
                             .reversible = true, .error = ""}};
  for (const char* phase : {"baseline", "fault:slow-link", "recovery:slow-link", "overall"}) {
    double slow = std::string(phase) == "fault:slow-link" ? 3 : 1;
    run.metrics.push_back(record("train/step_time", "ms", phase, 12 * slow));
    run.metrics.push_back(record("comm/latency", "us", phase, 800 * slow, {{"collective", std::string(kNasty)}}));
  }
  run.metrics.push_back({"resilience/goodput", "%", "higher", {{"phase", std::string("overall")}}, 91, {}});
  run.metrics.push_back({"resilience/badput", "%", "lower", {{"phase", std::string("overall")}, {"bucket", std::string("recovery")}}, 9, {}});
  for (std::int64_t rank = 0; rank < 2; ++rank) {
    for (const char* name : {"train/step_time", "train/compute_time"}) {
      Series s{name, "ms", {{"rank", rank}}, {}, {}};
      s.t.reserve(points);
      s.v.reserve(points);
      for (std::size_t i = 0; i < points; ++i) {
        double t = 30.0 * static_cast<double>(i) / static_cast<double>(points);
        bool window = t >= 10 && t < 20;
        s.t.push_back(t);
        s.v.push_back(10 + std::sin(static_cast<double>(i)) + (window && rank == 1 ? 25 : 0));
      }
      run.series.push_back(std::move(s));
    }
  }
  run.series[0].v[points / 3 + 7] = 987.5;  // one spike that downsampling must keep
  run.checks = {{"train/step_time", {{"phase", std::string("fault:slow-link")}}, "<=", 20, 36, CheckStatus::kFail,
                 "train/step_time p50 = 36 ms > 20 ms in fault:slow-link"},
                {"resilience/goodput", {{"phase", std::string("overall")}}, ">=", 80, 91, CheckStatus::kPass, ""}};
  Comparison c;
  c.baseline_run = "base-run";
  c.verdict = GateStatus::kFail;
  MetricComparison mc;
  mc.name = "train/step_time";
  mc.unit = "ms";
  mc.better = "lower";
  mc.labels = {{"phase", std::string("overall")}};
  mc.stat = "p50";
  mc.baseline = 10;
  mc.current = 12;
  mc.change = 0.2;
  mc.ci_low = 0.15;
  mc.ci_high = 0.25;
  mc.status = GateStatus::kFail;
  mc.reason = "p50 +20% [+15%, +25%], p = 0.001";
  c.metrics = {mc};
  run.comparison = c;
  return run;
}

}  // namespace

TEST_CASE("html: the document has the policy, the sections in order, the verdict and failed checks", "[html]") {
  auto doc = render_html(synthetic_run(500));
  CHECK_THAT(doc, Catch::Contains("<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; "
                                  "script-src 'unsafe-inline'; style-src 'unsafe-inline'; img-src data:\">"));
  for (const char* remote : {"src=\"http", "href=\"http", "src='http", "href='http", "url(http", "@import"})
    CHECK(doc.find(remote) == std::string::npos);
  std::size_t last = 0;
  for (const char* heading : {"Verdict", "Timelines", "Metrics by phase", "Per-fault impact", "Latency percentiles", "Per-rank step time",
                              "Checkpoints and recovery", "Tuning advice", "Environment", "Scenario"}) {
    auto at = doc.find(std::string("<h2>") + heading + "</h2>");
    INFO(heading);
    REQUIRE(at != std::string::npos);
    CHECK(at > last);
    last = at;
  }
  CHECK_THAT(doc, Catch::Contains("<div class=\"verdict fail\"><span class=\"big\">FAIL</span>"));
  CHECK_THAT(doc, Catch::Contains("<h3>Failed checks</h3>"));
  CHECK_THAT(doc, Catch::Contains("train/step_time p50 = 36 ms &gt; 20 ms in fault:slow-link"));
  // The baseline-run comparison under the value it compares: change and badge, the interval in its tooltip.
  CHECK_THAT(doc, Catch::Contains("<div class=\"cmp-one\" title=\"vs baseline run: p50 +20.0% [+15.0%, +25.0%] fail; "
                                  "p50 +20% [+15%, +25%], p = 0.001\">+20% <span class=\"badge fail\">FAIL</span>"));
  CHECK_THAT(doc, Catch::Contains("&quot;name&quot;: &quot;html-test&quot;"));  // the scenario, pretty-printed
  CHECK_THAT(doc, Catch::Contains("rank 1"));                                    // the heatmap
}

TEST_CASE("html: a label never closes the script or opens a tag", "[html]") {
  auto doc = render_html(synthetic_run(50));
  CHECK(doc.find("<b>") == std::string::npos);
  CHECK_THAT(doc, Catch::Contains("&lt;/script&gt;&lt;b&gt;"));      // in the tables
  CHECK_THAT(doc, Catch::Contains("\\u003c/script>\\u003cb>"));      // in the chart data
  CHECK(occurrences(doc, "</script>") == 3);                              // data, Chart.js, the page's script
}

TEST_CASE("html: extremes survive downsampling, and the result is bounded", "[html]") {
  std::vector<double> t, v;
  for (int i = 0; i < 100000; ++i) {
    t.push_back(i * 0.001);
    v.push_back(i == 31337 ? 500.0 : i == 77777 ? -3.0 : 1.0);
  }
  auto line = chaosbench::reports::html::downsample_extremes(t, v, 2000);
  CHECK(line.t.size() <= 2000);
  CHECK(std::find(line.v.begin(), line.v.end(), 500.0) != line.v.end());
  CHECK(std::find(line.v.begin(), line.v.end(), -3.0) != line.v.end());
  CHECK(std::is_sorted(line.t.begin(), line.t.end()));
  auto short_line = chaosbench::reports::html::downsample_extremes({0, 1}, {5, 6}, 2000);
  CHECK(short_line.v == std::vector<double>{5, 6});
  CHECK(chaosbench::reports::html::heat_colour(1.0) == "#ffffff");
  CHECK(chaosbench::reports::html::heat_colour(4.0) == "#b42318");
}

TEST_CASE("html: a run of 10^6 samples renders under 5 MB", "[html]") {
  auto run = synthetic_run(250000);  // 2 ranks x 2 metrics x 250000
  auto start = std::chrono::steady_clock::now();
  auto doc = render_html(run);
  double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  WARN("report.html for 10^6 samples: " << doc.size() / 1e6 << " MB in " << seconds << " s");
  CHECK(doc.size() < 5'000'000);
  CHECK_THAT(doc, Catch::Contains("987.5"));  // the spike is still drawn
}

namespace {

const std::string kChromium = "/usr/bin/chromium";

// `action` (--screenshot=FILE or --dump-dom) on `page` in headless Chromium, 1280 px wide.
chaosbench::test::CommandResult browse(const chaosbench::test::TempDir& dir, const std::string& page,
                                       const std::string& action, int height) {
  return chaosbench::test::run_command(
      {kChromium, "--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--no-first-run",
       "--user-data-dir=" + dir.file("profile"), "--enable-logging=stderr", "--v=0",
       "--window-size=1280," + std::to_string(height), "--virtual-time-budget=5000", action, "file://" + page},
      std::chrono::seconds(60));
}

// Renders `run` into the build directory as `page` and in Chromium, a window `height` px
// tall: its screenshot as `screenshot` next to it (for a person to look at), and the DOM
// after the page's script ran. Every check of a quiet page: it drew, logged nothing and
// asked for nothing.
std::string render_in_chromium(const RunResult& run, const std::string& page_name, const std::string& screenshot_name,
                               int height) {
  chaosbench::test::TempDir dir;
  const std::string build = CHAOSBENCH_BUILD_DIR;
  const std::string page = build + "/" + page_name, screenshot = build + "/" + screenshot_name;
  std::ofstream(page, std::ios::binary) << render_html(run);
  fs::remove(screenshot);
  auto shot = browse(dir, page, "--screenshot=" + screenshot, height);
  INFO(shot.err);
  REQUIRE_FALSE(shot.timed_out);
  CHECK(shot.exit_code == 0);
  CHECK(fs::exists(screenshot));
  auto dom = browse(dir, page, "--dump-dom", height);
  INFO(dom.err);
  REQUIRE_FALSE(dom.timed_out);
  CHECK_THAT(dom.out, Catch::Contains("data-rendered=\"ok\""));
  for (const auto* r : {&shot, &dom}) {
    CHECK(r->err.find("CONSOLE") == std::string::npos);  // the page logs nothing unless it fails
    CHECK(r->err.find("Uncaught") == std::string::npos);
    CHECK(r->err.find("Refused to") == std::string::npos);  // a blocked load: a network request was attempted
    CHECK(r->err.find("Content Security Policy") == std::string::npos);
  }
  return dom.out;
}

// The value of <body data-NAME="...">, or "(absent)".
std::string body_data(const std::string& dom, const std::string& name) {
  const std::string key = "data-" + name + "=\"";
  auto at = dom.find(key);
  if (at == std::string::npos) return "(absent)";
  at += key.size();
  return dom.substr(at, dom.find('"', at) - at);
}

// A 10-fault run compared with a baseline run as the gate compares it: every record but
// fault/* (the per-fault figures among them), in every phase; step times regressed, and a
// single-valued figure only WARNs.
RunResult ten_fault_run() {
  auto run = chaosbench::test::many_faults_run(10);
  Comparison cmp;
  cmp.baseline_run = "base-run";
  cmp.verdict = GateStatus::kFail;
  for (const auto& m : run.metrics) {
    if (m.name.starts_with("fault/")) continue;
    MetricComparison c;
    c.name = m.name;
    c.unit = m.unit;
    c.better = m.better;
    c.labels = m.labels;
    c.stat = "p50";
    c.change = m.name == "train/step_time" ? 0.2 : 0.01;
    c.ci_low = c.change - 0.05;
    c.ci_high = c.change + 0.05;
    c.status = m.name == "train/step_time" ? GateStatus::kFail : GateStatus::kPass;
    c.reason = "p50 within tolerance";
    if (!m.stats) {
      c.stat = "value";
      c.ci_low.reset();
      c.ci_high.reset();
      c.status = GateStatus::kWarn;
      c.reason = "a single value on each side";
    }
    cmp.metrics.push_back(c);
  }
  run.comparison = cmp;
  return run;
}

}  // namespace

TEST_CASE("html: per-fault figures have a table of their own, not rows of the phase table", "[html]") {
  const auto doc = render_html(ten_fault_run());
  const auto phases_at = doc.find("<section id=\"phases\">"), faults_at = doc.find("<section id=\"fault-impact\">");
  REQUIRE(phases_at != std::string::npos);
  REQUIRE(faults_at > phases_at);
  const std::string phase_table = doc.substr(phases_at, faults_at - phases_at);
  const std::string fault_table = doc.substr(faults_at, doc.find("</section>", faults_at) - faults_at);
  // The phase table: baseline, a column per fault (its window over its recovery), overall.
  CHECK(occurrences(phase_table, "<th class=\"num phase\">") == 2);
  CHECK(occurrences(phase_table, "<th class=\"num phase fault\">") == 10);
  CHECK(occurrences(phase_table, "<td class=\"num pair\">") == 10 * 13);  // 13 rows have fault and recovery values
  for (const char* per_fault :
       {"time_to_detect", "time_to_recover", "lost_steps", "throughput_retention", "apply_latency", "effect_error"})
    CHECK(phase_table.find(per_fault) == std::string::npos);
  CHECK(occurrences(phase_table, "<div class=\"cmp-one") == 13 * 22 + 2);  // every phase of every row, goodput, restarts
  // The per-fault table: a row per fault, the four resilience figures first, then the others.
  CHECK(occurrences(fault_table, "<tr><td class=\"first\">") == 10);
  for (const char* column : {"time to detect", "time to recover", "lost steps", "throughput retention", "apply latency",
                             "effect error"})
    CHECK_THAT(fault_table, Catch::Contains(std::string(">") + column));
  CHECK_THAT(fault_table, Catch::Contains("node-kill-3</td><td><code>node.kill</code></td><td>node2</td>"
                                          "<td class=\"num\">0.031 s<div class=\"cmp-one\" title=\"vs baseline run: value +1.0% "
                                          "warn; a single value on each side\">+1% <span class=\"badge warn\">WARN</span>"));
  CHECK_THAT(fault_table, Catch::Contains("<td class=\"num\">56 %<div class=\"cmp-one"));   // retention of slow-link-1: 1 / 1.8
  CHECK(occurrences(fault_table, "<td class=\"num none\">&ndash;</td>") == 7 * 3 + 6);  // no detect/recover/lost, no effect
  // The recovery section keeps the run-wide figures only.
  CHECK(doc.find("<div class=\"k\">time_to_recover</div>") == std::string::npos);
  CHECK_THAT(doc, Catch::Contains("<div class=\"k\">goodput</div>"));
}

TEST_CASE("html: report.html renders in headless Chromium without errors or requests", "[html]") {
  if (!fs::exists(kChromium)) {
    WARN("skipped: chromium is not installed (scripts/bootstrap.sh installs it)");
    return;
  }
  auto run = from_json(chaosbench::test::read_file(chaosbench::test::source("tests/data/train-results.json")));
  auto compared = synthetic_run(10);
  run.comparison = compared.comparison;
  run.checks.push_back(compared.checks.front());
  // The probes' lanes and the abort's marker in the charts are drawn too.
  const auto aborted = chaosbench::test::aborted_run();
  run.probes = aborted.probes;
  run.abort = aborted.abort;
  run.verdict = Verdict::kAborted;
  const auto dom = render_in_chromium(run, "report-sample.html", "report-screenshot.png", 2400);
  CHECK(body_data(dom, "page-fits") == "true");
}

TEST_CASE("html: with 10 faults the phase and per-fault tables fit a 1280 px page", "[html]") {
  if (!fs::exists(kChromium)) {
    WARN("skipped: chromium is not installed (scripts/bootstrap.sh installs it)");
    return;
  }
  // <build>/report-10-faults.png shows the page down to the per-fault table.
  const auto dom = render_in_chromium(ten_fault_run(), "report-10-faults.html", "report-10-faults.png", 4200);
  CHECK(body_data(dom, "page-fits") == "true");  // the page is no wider than the window
  const std::string scrolled = body_data(dom, "scrolled");
  INFO("sections whose tables scroll sideways: " << scrolled);
  CHECK(scrolled != "(absent)");
  CHECK(scrolled.find("phases") == std::string::npos);  // every column in view, no sideways scrolling
  CHECK(scrolled.find("fault-impact") == std::string::npos);
}
