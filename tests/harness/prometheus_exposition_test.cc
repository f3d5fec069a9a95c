// The Prometheus side of `run --metrics-listen`: the text format's spelling (names,
// escapes, values), the live exposition of a run's state, the listener over real sockets
// (404, 405, bad requests, bounds, a port in use), and the store's newest values.
#include <catch2/catch.hpp>

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <limits>
#include <string>
#include <thread>

#include "fake_node_site.h"
#include "harness/exposition/exposition_writer.h"
#include "harness/prometheus/listen_address.h"
#include "harness/prometheus/live_exposition.h"
#include "harness/prometheus/metrics_listener.h"
#include "harness/run/fault_driver.h"
#include "harness/collect/live_status.h"
#include "harness/collect/sample_store.h"
#include "http_test_client.h"
#include "test_util.h"

namespace prometheus_exposition_test {  // this file's names, apart in a unity batch (tests/CMakeLists.txt)

namespace prom = chaosbench::harness::prometheus;
namespace bench = chaosbench::bench;
using chaosbench::harness::FaultSpec;
using chaosbench::harness::LiveStatus;
using chaosbench::harness::RunStage;
using chaosbench::harness::SampleStore;

namespace {

bench::Sample sample(const std::string& name, int rank, double value, bench::Labels labels = {}) {
  bench::Sample s;
  s.name = name;
  s.rank = rank;
  s.value = value;
  s.time = 1000 + value;
  s.unit = "GB/s";
  s.labels = std::move(labels);
  return s;
}

std::vector<FaultSpec> two_faults() {
  FaultSpec a;
  a.name = "slow-link";
  a.type = "network.delay";
  a.target.form = chaosbench::faults::TargetForm::kNodes;
  a.target.indices = {3};
  FaultSpec b;
  b.name = "cut";
  b.type = "network.partition";
  b.target.form = chaosbench::faults::TargetForm::kGroups;
  b.target.groups = {{0, 1}, {2, 3}};
  return {a, b};
}

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

}  // namespace

TEST_CASE("exposition names: ours become chaosbench_ names, labels valid, values escaped", "[prometheus]") {
  CHECK(prom::metric_name("coll/busbw") == "chaosbench_coll_busbw");
  CHECK(prom::metric_name("infer/p99-latency.ms") == "chaosbench_infer_p99_latency_ms");
  CHECK(prom::metric_name("a:b") == "chaosbench_a_b");
  CHECK(prom::label_name("bytes") == "bytes");
  CHECK(prom::label_name("9lives") == "_9lives");
  CHECK(prom::label_name("__name__") == "x__name__");
  CHECK(prom::label_name("a-b") == "a_b");
  CHECK(prom::label_name("") == "_");
  CHECK(prom::escape_label_value("a\"b\\c\nd") == "a\\\"b\\\\c\\nd");
  CHECK(prom::escape_help("x\\y\nz\"") == "x\\\\y\\nz\"");
  CHECK(prom::format_value(std::nan("")) == "NaN");
  CHECK(prom::format_value(std::numeric_limits<double>::infinity()) == "+Inf");
  CHECK(prom::format_value(-std::numeric_limits<double>::infinity()) == "-Inf");
  CHECK(prom::format_value(0.1) == "0.1");
  CHECK(prom::format_value(3) == "3");
  CHECK(std::stod(prom::format_value(1.0 / 3.0)) == 1.0 / 3.0);
}

TEST_CASE("exposition writer: a family's HELP and TYPE, then its samples", "[prometheus]") {
  prom::ExpositionWriter w;
  w.family("chaosbench_x", "gauge", "line one\nline two");
  w.sample("chaosbench_x", {{"rank", "0"}, {"a-b", "q\"uote"}}, 1.5);
  w.sample("chaosbench_x", {}, std::nan(""));
  CHECK(w.text() ==
        "# HELP chaosbench_x line one\\nline two\n# TYPE chaosbench_x gauge\n"
        "chaosbench_x{rank=\"0\",a_b=\"q\\\"uote\"} 1.5\nchaosbench_x NaN\n");
}

TEST_CASE("listen addresses: the forms accepted and the errors", "[prometheus]") {
  auto a = prom::parse_listen_address("127.0.0.1:9464");
  CHECK(a.host == "127.0.0.1");
  CHECK(a.port == 9464);
  CHECK(prom::parse_listen_address("[::1]:80").to_string() == "[::1]:80");
  CHECK(prom::parse_listen_address("localhost:0").host == "127.0.0.1");
  CHECK(prom::parse_listen_address(":9464").host == "0.0.0.0");
  for (const char* bad : {"9464", "127.0.0.1:", "127.0.0.1:65536", "127.0.0.1:-1", "127.0.0.1:9x", "host.example:80",
                          "::1:80", "[nope]:80", "1.2.3:80"})
    CHECK_THROWS_AS(prom::parse_listen_address(bad), std::invalid_argument);
}

TEST_CASE("live status: the phase follows the stage and the faults", "[prometheus]") {
  LiveStatus live("run-1", "demo", two_faults());
  CHECK(live.snapshot().phase() == "setup");
  live.set_stage(RunStage::kRunning);
  CHECK(live.snapshot().phase() == "baseline");
  live.fault_applied(0, {"node3"});
  live.fault_applied(1, {"node0", "node2"});
  CHECK(live.snapshot().phase() == "fault:slow-link,cut");
  live.fault_reverted(1);
  live.fault_reverted(7);  // out of range: ignored
  CHECK(live.snapshot().phase() == "fault:slow-link");
  live.fault_reverted(0);
  live.fault_reverted(0);  // never below zero
  auto s = live.snapshot();
  CHECK(s.phase() == "recovery");
  CHECK(s.faults[0].active == 0);
  CHECK(s.faults[0].applied == 1);
  CHECK(s.faults[0].target == "nodes:3");
  CHECK(s.faults[1].target == "groups:0,1|2,3");
  CHECK(s.faults[1].targets == std::vector<std::string>{"node0", "node2"});
  live.aborted("probe error-rate failed for 3s");
  CHECK(live.snapshot().phase() == "aborted");
  live.set_stage(RunStage::kFinished);
  CHECK(live.snapshot().phase() == "finished");
  const auto phases = live.snapshot().phases();
  CHECK(std::count(phases.begin(), phases.end(), "fault:cut") == 1);
  CHECK(std::count(phases.begin(), phases.end(), "finished") == 1);
}

TEST_CASE("live status: probe results count failures", "[prometheus]") {
  LiveStatus live("run-1", "demo", {});
  live.declare_probe("quiet");
  live.probe_result("err", true, 0.01, 1.0);
  live.probe_result("err", false, 0.2, 2.0);
  live.probe_result("err", false, std::nullopt, 3.0);
  auto s = live.snapshot();
  CHECK(s.probes.at("err").failures == 2);
  CHECK(s.probes.at("err").results == 3);
  CHECK(s.probes.at("err").ok == false);
  CHECK_FALSE(s.probes.at("err").value);
  CHECK(s.probes.at("err").t == 3.0);
  CHECK_FALSE(s.probes.at("quiet").ok);
}

TEST_CASE("sample store: each series' newest value, by name, rank and labels", "[prometheus]") {
  SampleStore store;
  store.add(sample("coll/busbw", 1, 5, {{"bytes", std::int64_t{1024}}}), 1);
  store.add(sample("coll/busbw", 0, 4, {{"bytes", std::int64_t{1024}}}), 1);
  store.add(sample("coll/busbw", 0, 6, {{"bytes", std::int64_t{1024}}}), 2);
  store.add(sample("coll/busbw", 0, 7, {{"bytes", std::int64_t{2048}}}), 2);
  store.add(sample("a/first", 0, 1), 3);
  const auto latest = store.latest();
  REQUIRE(latest.size() == 4);
  CHECK(store.series_count() == 4);
  CHECK(latest[0].name == "a/first");
  CHECK(latest[1].rank == 0);
  CHECK(latest[1].value == 6);  // the newer of the two with bytes=1024
  CHECK(latest[2].value == 7);
  CHECK(latest[3].rank == 1);
  CHECK(latest[3].unit == "GB/s");
  CHECK(store.sample_count() == 5);  // every sample is still kept
}

TEST_CASE("live exposition: the run's families and each metric's newest value", "[prometheus]") {
  LiveStatus live("run-7", "demo \"quoted\"", two_faults());
  live.set_stage(RunStage::kRunning);
  live.fault_applied(0, {"node3"});
  live.probe_result("err", false, 0.25, 2.0);
  const auto snap = live.snapshot();
  std::vector<chaosbench::harness::LatestSample> latest{
      {"coll/busbw", 0, {{"bytes", std::int64_t{1024}}, {"rank", std::string("x")}}, "GB/s", 2.5, 1},
      {"coll_busbw", 0, {}, "GB/s", 9, 1},       // meets coll/busbw's name: left out
      {"fault/active", 0, {}, "", 1, 1},         // meets a run family: left out
      {"my/thing", 2, {{"a-b", std::string("v")}, {"a_b", std::string("w")}}, "", std::nan(""), 1}};
  const std::string text = prom::render_live_exposition({snap, latest, 12.5, 40, 3});
  CHECK(contains(text, "chaosbench_run_info{run_id=\"run-7\",scenario=\"demo \\\"quoted\\\"\"} 1\n"));
  CHECK(contains(text, "chaosbench_run_elapsed_seconds 12.5\n"));
  CHECK(contains(text, "chaosbench_phase{phase=\"fault:slow-link\"} 1\n"));
  CHECK(contains(text, "chaosbench_phase{phase=\"baseline\"} 0\n"));
  CHECK(contains(text, "chaosbench_fault_active{name=\"slow-link\",type=\"network.delay\",target=\"nodes:3\"} 1\n"));
  CHECK(contains(text, "chaosbench_fault_active{name=\"cut\",type=\"network.partition\",target=\"groups:0,1|2,3\"} 0\n"));
  CHECK(contains(text, "chaosbench_probe_ok{probe=\"err\"} 0\n"));
  CHECK(contains(text, "chaosbench_probe_failures_total{probe=\"err\"} 1\n"));
  CHECK(contains(text, "chaosbench_samples_received_total 40\n"));
  CHECK(contains(text, "# TYPE chaosbench_coll_busbw gauge\n"));
  CHECK(contains(text, "chaosbench_coll_busbw{rank=\"0\",bytes=\"1024\"} 2.5\n"));
  CHECK_FALSE(contains(text, " 9\n"));
  CHECK(contains(text, "chaosbench_my_thing{rank=\"2\",a_b=\"v\"} NaN\n"));
  CHECK_FALSE(contains(text, "chaosbench_fault_active{rank"));
  // Each family opened once.
  std::size_t pos = 0, types = 0;
  while ((pos = text.find("# TYPE chaosbench_fault_active ", pos)) != std::string::npos) ++types, ++pos;
  CHECK(types == 1);
}

TEST_CASE("metrics listener: /metrics, 404, 405, bad requests and a port in use", "[prometheus]") {
  std::atomic<int> renders{0};
  prom::MetricsListener listener(prom::parse_listen_address("127.0.0.1:0"), [&] {
    ++renders;
    return std::string("chaosbench_up 1\n");
  });
  const auto port = listener.port();
  REQUIRE(port != 0);
  auto ok = chaosbench::test::http_request(port, "GET", "/metrics");
  CHECK(ok.status == 200);
  CHECK(ok.body == "chaosbench_up 1\n");
  CHECK(chaosbench::test::http_request(port, "GET", "/metrics?x=1").status == 200);
  CHECK(chaosbench::test::http_request(port, "GET", "/").status == 404);
  CHECK(chaosbench::test::http_request(port, "GET", "/metricsx").status == 404);
  CHECK(chaosbench::test::http_request(port, "POST", "/metrics", "x").status == 400);  // a body: refused
  CHECK(chaosbench::test::http_request(port, "DELETE", "/metrics").status == 405);
  CHECK(renders == 2);  // only the two good scrapes rendered
  // Garbage and headers over the bound get a 400 and a close.
  int fd = chaosbench::test::connect_local(port);
  REQUIRE(fd >= 0);
  REQUIRE(chaosbench::test::send_all(fd, "NOT HTTP AT ALL\r\n\r\n"));
  std::string pending;
  CHECK(chaosbench::test::read_reply(fd, pending).status == 400);
  CHECK(chaosbench::test::wait_closed(fd));
  ::close(fd);
  fd = chaosbench::test::connect_local(port);
  REQUIRE(fd >= 0);
  chaosbench::test::send_all(fd, "GET /metrics HTTP/1.1\r\nX-Big: " + std::string(20000, 'a') + "\r\n\r\n");
  // A 400, unless the close with our bytes unread reset the connection before we read it.
  const int status = chaosbench::test::read_reply(fd, pending).status;
  CHECK((status == 400 || status == 0));
  CHECK(chaosbench::test::wait_closed(fd));
  ::close(fd);
  // The same port again cannot be had.
  CHECK_THROWS_AS(prom::MetricsListener(prom::parse_listen_address("127.0.0.1:" + std::to_string(port)),
                                        [] { return std::string(); }),
                  std::runtime_error);
  listener.stop();
  listener.stop();  // idempotent
  CHECK(chaosbench::test::http_request(port, "GET", "/metrics").status == 0);
}

TEST_CASE("metrics listener: keep-alive scrapes on one connection, a render that throws is a 500", "[prometheus]") {
  std::atomic<bool> fail{false};
  prom::MetricsListener listener(prom::parse_listen_address("127.0.0.1:0"), [&]() -> std::string {
    if (fail) throw std::runtime_error("boom");
    return "a 1\n";
  });
  int fd = chaosbench::test::connect_local(listener.port());
  REQUIRE(fd >= 0);
  std::string pending;
  for (int i = 0; i < 3; ++i) {
    REQUIRE(chaosbench::test::send_all(fd, "GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n"));
    auto r = chaosbench::test::read_reply(fd, pending);
    CHECK(r.status == 200);
    CHECK(r.body == "a 1\n");
  }
  ::close(fd);
  fail = true;
  CHECK(chaosbench::test::http_request(listener.port(), "GET", "/metrics").status == 500);
}

TEST_CASE("fault driver observer: each apply and revert, in order, feeds the live status", "[prometheus]") {
  chaosbench::test::TempDir dir;
  chaosbench::test::FakeNodeSite site;
  chaosbench::harness::TimelineLog timeline(dir.file("timeline.jsonl"));
  auto at = [](double s) {
    return chaosbench::common::Duration{std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::duration<double>(s))};
  };
  std::vector<FaultSpec> specs = two_faults();
  specs[0].type = specs[1].type = "marker";
  specs[0].at = at(1);
  specs[0].duration = at(2);
  specs[1].at = at(2);
  specs[1].duration = at(0.5);
  double now = 0;
  chaosbench::harness::FaultDriver driver(specs, site, timeline, [&] { return now; }, [](const std::string&) {});
  LiveStatus live("r", "s", specs);
  live.set_stage(RunStage::kRunning);
  std::vector<std::string> seen;
  driver.set_observer([&](const chaosbench::harness::FaultTransition& t) {
    seen.push_back((t.active ? "+" : "-") + t.record->name + "@" + std::to_string(static_cast<int>(t.t_s * 10)));
    if (t.active) live.fault_applied(t.fault, t.record->targets);
    else live.fault_reverted(t.fault);
  });
  auto tick = [&](double t) {
    now = t;
    driver.run_due(t, -1, [] { return std::vector<chaosbench::harness::RankProcess>{{0, 0, 1000}}; }, nullptr);
    return live.snapshot().phase();
  };
  CHECK(tick(0.5) == "baseline");
  CHECK(tick(1.0) == "fault:slow-link");
  CHECK(tick(2.0) == "fault:slow-link,cut");
  CHECK(tick(2.5) == "fault:slow-link");
  CHECK(tick(3.0) == "recovery");
  CHECK(seen == std::vector<std::string>{"+slow-link@10", "+cut@20", "-cut@25", "-slow-link@30"});
}

}  // namespace prometheus_exposition_test
