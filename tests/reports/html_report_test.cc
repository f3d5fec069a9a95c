// report.html: structure, escaping, size for 10^6 samples, downsampling, the per-fault
// table, the baseline gate's distributions (order, numbers, coordinates), a combined result
// of repeated runs, and real renders in headless Chromium (no console error, no blocked
// request, no part wider than a 1280 px window; the pages and their screenshots are kept in
// the build directory: report-sample.html and report-screenshot.png, report-10-faults.html
// and report-10-faults.png for a run of 10 faults, report-repeat.html and
// report-repeat.png for a combined result of 3 runs).
#include <catch2/catch.hpp>
#include <fmt/format.h>

#include <chrono>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "reports/render/html/downsample.h"
#include "reports/render/html/html_text.h"
#include "reports/render/html/rank_heatmap.h"
#include "reports/render/html_report.h"
#include "reports/model/json_io.h"
#include "reports/model/text_format.h"
#include "report_fixtures.h"
#include "test_util.h"

namespace html_report_test {  // this file's names, apart in a unity batch (tests/CMakeLists.txt)

using namespace chaosbench::reports;
using chaosbench::test::occurrences;
namespace fs = std::filesystem;

namespace {

const char* kNasty = "</script><b>";

MetricRecord record(const std::string& name, const std::string& unit, const std::string& phase, double value,
                    Labels extra = {}) {
  extra["phase"] = phase;
  MetricRecord m{name, unit, chaosbench::common::Better::kLower, extra, value, {}};
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
  run.metrics.push_back({"resilience/goodput", "%", chaosbench::common::Better::kHigher, {{"phase", std::string("overall")}}, 91, {}});
  run.metrics.push_back({"resilience/badput", "%", chaosbench::common::Better::kLower, {{"phase", std::string("overall")}, {"bucket", std::string("recovery")}}, 9, {}});
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
  mc.better = chaosbench::common::Better::kLower;
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
  for (const char* heading : {"Verdict", "Baseline gate: distributions", "Timelines", "Metrics by phase", "Per-fault impact", "Latency percentiles", "Per-rank step time",
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
  // The gate's row has no points (an older results.json): its statistics alone, said so.
  CHECK_THAT(doc, Catch::Contains("No points in this comparison (a results.json from before the report plotted them)"));
  CHECK(occurrences(doc, "</title></polygon>") == 2);  // a diamond a side
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

// A run gated on four rows (report_fixtures.h gated_rows).
RunResult gated_run() {
  auto run = synthetic_run(50);
  run.comparison->metrics = chaosbench::test::gated_rows();
  return run;
}

// The plot of the card whose head names `metric`.
std::string plot_of(const std::string& doc, const std::string& metric) {
  const auto card = doc.find("<div class=\"dist-head\"><span class=\"badge");
  const auto head = doc.find("<code>" + metric + "</code>", card);
  REQUIRE(head != std::string::npos);
  const auto at = doc.find("<svg class=\"dist\"", head);
  return doc.substr(at, doc.find("</svg>", at) + 6 - at);
}

// The numbers in attribute `name` (the first at or after `from`).
std::vector<double> numbers_of(const std::string& text, const std::string& name, std::size_t from = 0) {
  const std::string key = " " + name + "=\"";
  auto at = text.find(key, from);
  if (at == std::string::npos) return {};
  at += key.size();
  std::istringstream in(text.substr(at, text.find('"', at) - at));
  std::vector<double> out;
  for (double v; in >> v;) out.push_back(v);
  return out;
}

}  // namespace

TEST_CASE("html: the baseline gate shows each row's two distributions, FAIL rows first", "[html]") {
  const auto doc = render_html(gated_run());
  const auto gate = doc.find("<section id=\"gate\"><h2>Baseline gate: distributions</h2>");
  REQUIRE(gate != std::string::npos);
  CHECK(gate > doc.find("<section id=\"verdict\">"));
  CHECK(gate < doc.find("<section id=\"timelines\">"));
  CHECK_THAT(doc, Catch::Contains("<a href=\"#gate\">Baseline gate</a>"));
  CHECK_THAT(doc, Catch::Contains("2 FAIL, 1 WARN, 1 PASS of 4 gated rows"));
  // Four rows: every one a card, FAIL (in the gate's order), then WARN, then PASS.
  CHECK(occurrences(doc, "<div class=\"dist-card ") == 4);
  const auto latency = doc.find("<code>comm/latency</code>", gate), step = doc.find("<code>train/step_time</code>", gate);
  const auto throughput = doc.find("<code>train/throughput</code>", gate), busbw = doc.find("<code>comm/busbw</code>", gate);
  CHECK(latency < step);
  CHECK(step < throughput);
  CHECK(throughput < busbw);
  CHECK(doc.find("<div class=\"dist-card fail\">", gate) < doc.find("<div class=\"dist-card warn\">", gate));
  // The numbers of each row: both sides' statistic, the change, its interval, p, n per side.
  CHECK_THAT(doc, Catch::Contains("<span>10.0 ms → 12.1 ms</span> · <span>+20.8% [+6.0%, +15.0%]</span> · <span>p 0.002"
                                  "</span> · <span>5 vs 5 runs</span> · <span>tolerance 5%</span>"));
  CHECK_THAT(doc, Catch::Contains("<span>290 us → 320 us</span> · <span>+10.3% [+6.0%, +15.0%]</span> · <span>p 0.002"
                                  "</span> · <span>n 4000 vs 4100 samples</span>"));
  CHECK_THAT(doc, Catch::Contains("<span>5120 samples/s → 4800 samples/s</span> · <span>-6.2%</span> · <span>1 value each"));
  CHECK_THAT(doc, Catch::Contains("Hollow dots: 21 quantiles (0, 5, …, 100 %) of each side&apos;s upper decile (the values "
                                  "tested for p99)"));
  CHECK_THAT(doc, Catch::Contains("Dots: each run&apos;s p50 (one per run)"));
  CHECK_THAT(doc, Catch::Contains("One value per side: no distribution to test"));
}

TEST_CASE("html: the gate's plots put the points, boxes and tolerance band where the numbers say", "[html]") {
  const auto doc = render_html(gated_run());
  // The step time's runs: a linear axis over the points and the band (10 ± 5 %), padded 4 %.
  const auto step = plot_of(doc, "train/step_time");
  CHECK_THAT(step, Catch::Contains("data-scale=\"linear\""));
  const auto domain = numbers_of(step, "data-domain");
  REQUIRE(domain.size() == 2);
  CHECK(domain[0] == Approx(9.5 - 2.8 * 0.04));
  CHECK(domain[1] == Approx(12.3 + 2.8 * 0.04));
  CHECK(numbers_of(step, "data-x") == std::vector<double>{66, 350});
  auto x = [&](double v) { return 66 + (v - domain[0]) / (domain[1] - domain[0]) * 284; };
  CHECK(numbers_of(step, "data-box") == std::vector<double>{9.8, 9.9, 10, 10.1, 10.2});
  CHECK(numbers_of(step, "data-box", step.find("class=\"side c fail\"")) == std::vector<double>{11.8, 12, 12.1, 12.2, 12.3});
  CHECK(occurrences(step, "<circle class=\"p\"") == 10);  // every run's figure, baseline and current
  for (std::size_t at = step.find("<circle"); at != std::string::npos; at = step.find("<circle", at + 1)) {
    const double v = numbers_of(step, "data-v", at).at(0);
    INFO("point " << v);
    CHECK(numbers_of(step, "cx", at).at(0) == Approx(x(v)).margin(0.006));
  }
  // The box of the baseline: from q1 to q3, the median line at 10.
  CHECK(numbers_of(step, "x", step.find("<rect class=\"box\"")).at(0) == Approx(x(9.9)).margin(0.006));
  CHECK(numbers_of(step, "width", step.find("<rect class=\"box\"")).at(0) == Approx(x(10.1) - x(9.9)).margin(0.01));
  CHECK(numbers_of(step, "x1", step.find("<line class=\"median\"")).at(0) == Approx(x(10)).margin(0.006));
  // The band: 9.5 to 10.5 ms; its dashed edge at 10.5 (a step time's regression is a rise).
  const auto band = step.find("<rect class=\"band\"");
  CHECK(numbers_of(step, "x", band).at(0) == Approx(x(9.5)).margin(0.006));
  CHECK(numbers_of(step, "width", band).at(0) == Approx(x(10.5) - x(9.5)).margin(0.01));
  CHECK(numbers_of(step, "x1", step.find("<line class=\"edge\"")).at(0) == Approx(x(10.5)).margin(0.006));
  // The latency's quantile strips: 21 hollow dots a side, the box from the 25/50/75 % points.
  const auto latency = plot_of(doc, "comm/latency");
  CHECK(occurrences(latency, "<circle class=\"q\"") == 42);
  CHECK(numbers_of(latency, "data-box") == std::vector<double>{100, 150, 200, 250, 300});
  CHECK_THAT(latency, Catch::Contains("<title>25 %: 150 us</title>"));
  // A throughput's edge is the low one; a single value is a dot a side, no box.
  const auto single = plot_of(doc, "train/throughput");
  CHECK(occurrences(single, "<circle class=\"p\"") == 2);
  CHECK(single.find("<rect class=\"box\"") == std::string::npos);
  const auto busbw = plot_of(doc, "comm/busbw");
  const auto bx = numbers_of(busbw, "data-domain");
  CHECK(numbers_of(busbw, "x1", busbw.find("<line class=\"edge\"")).at(0) ==
        Approx(66 + (4.1 * 0.95 - bx[0]) / (bx[1] - bx[0]) * 284).margin(0.006));
}

TEST_CASE("html: with many rows FAIL, WARN and the closest passing rows are plotted, the rest listed", "[html]") {
  auto run = gated_run();
  auto& rows = run.comparison->metrics;
  const auto pass = rows.front();  // comm/busbw, +0.4 %: higher is better, so no step towards failing
  for (int i = 0; i < 36; ++i) {  // 40 rows: 2 FAIL, 1 WARN, 37 PASS
    rows.push_back(pass);
    rows.back().change = -0.001 * i;  // the last ones fell most: nearest their tolerance
    rows.back().labels["rank"] = std::int64_t{i};
  }
  const auto doc = render_html(run);
  const auto grid = doc.find("<div class=\"dist-grid\">");
  const auto more = doc.find("<details class=\"dist-more\">");
  REQUIRE(grid != std::string::npos);
  REQUIRE(more > grid);
  const std::string cards = doc.substr(grid, more - grid);
  CHECK(occurrences(cards, "<div class=\"dist-card ") == 6);  // FAIL, FAIL, WARN, then 3 PASS
  CHECK(occurrences(cards, "<div class=\"dist-card pass\">") == 3);
  for (const char* rank : {"rank=35", "rank=34", "rank=33"}) CHECK_THAT(cards, Catch::Contains(rank));
  CHECK(cards.find("rank=32") == std::string::npos);
  CHECK(cards.find("rank=35") < cards.find("rank=33"));
  CHECK_THAT(doc, Catch::Contains("<summary>34 more rows (34 PASS): a line each, open one for its plot</summary>"));
  CHECK(occurrences(doc, "<details class=\"dist-row\">") == 34);
  CHECK(occurrences(doc, "<svg class=\"dist\"") == 40);  // each row's plot, in its card or its line
  // Without a comparison there is no section and no link to it.
  run.comparison.reset();
  const auto plain = render_html(run);
  CHECK(plain.find("id=\"gate\"") == std::string::npos);
  CHECK(plain.find("href=\"#gate\"") == std::string::npos);
}

TEST_CASE("html: a combined result of repeated runs lists its runs and draws no empty charts", "[html]") {
  const auto run = chaosbench::test::combined_run();
  const auto doc = render_html(run);
  const auto verdict = doc.substr(doc.find("<section id=\"verdict\">"), doc.find("<section id=\"gate\">") - doc.find("<section id=\"verdict\">"));
  CHECK_THAT(verdict, Catch::Contains(chaosbench::reports::html::escape(repeat_text(*run.repeat))));
  CHECK_THAT(verdict, Catch::Contains("medians of 3 runs (2 passed on their own; each in run-01 … run-03)"));
  for (const char* dir : {"run-01", "run-02", "run-03"})
    CHECK_THAT(verdict, Catch::Contains(fmt::format("<td><a href=\"{0}/report.html\">{0}</a></td>", dir)));
  CHECK_THAT(verdict, Catch::Contains("<span class=\"badge fail\">FAIL</span></td><td class=\"num\">11.5 s</td>"));
  CHECK_THAT(doc, Catch::Contains("A combined result of 3 runs keeps no time series: each run's own report has them "
                                  "(run-01/report.html … run-03/report.html)."));
  CHECK_THAT(doc, Catch::Contains("A combined result of 3 runs keeps no per-rank series"));
  CHECK_THAT(doc, Catch::Contains("A combined result of 3 runs keeps no events"));
  CHECK(doc.find("This run recorded no time series") == std::string::npos);
  CHECK(doc.find("no per-rank step or compute time series") == std::string::npos);
  CHECK_THAT(doc, Catch::Contains("3 vs 3 runs"));
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
  std::size_t i = 0;
  for (const auto& m : run.metrics) {
    if (m.name.starts_with("fault/")) continue;
    const bool slow = m.name == "train/step_time";
    // Step times regressed (repeated runs and one-run samples in turn), the rest passes;
    // single values only WARN.
    auto c = chaosbench::test::gated_row(m, i++ % 2 ? "samples" : "runs", slow ? 0.2 : 0.01, slow ? GateStatus::kFail : GateStatus::kPass);
    if (!m.stats) c.status = GateStatus::kWarn;
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
  // <build>/report-10-faults.png shows the page down to the per-fault table: the baseline
  // gate's cards (the regressed step times) and the list of the other rows above it.
  const auto dom = render_in_chromium(ten_fault_run(), "report-10-faults.html", "report-10-faults.png", 5600);
  CHECK(body_data(dom, "page-fits") == "true");  // the page is no wider than the window
  const std::string scrolled = body_data(dom, "scrolled");
  INFO("sections whose tables scroll sideways: " << scrolled);
  CHECK(scrolled != "(absent)");
  CHECK(scrolled.find("phases") == std::string::npos);  // every column in view, no sideways scrolling
  CHECK(scrolled.find("fault-impact") == std::string::npos);
}

TEST_CASE("html: a combined result of repeated runs renders in headless Chromium", "[html]") {
  if (!fs::exists(kChromium)) {
    WARN("skipped: chromium is not installed (scripts/bootstrap.sh installs it)");
    return;
  }
  // <build>/report-repeat.png: the runs under the verdict, the gate's plots of 3 runs a side.
  const auto dom = render_in_chromium(chaosbench::test::combined_run(), "report-repeat.html", "report-repeat.png", 2400);
  CHECK(body_data(dom, "page-fits") == "true");
}

}  // namespace html_report_test
