// The probe evaluators that need no server: metric probes over a real SampleStore, the
// pure judges of http and Prometheus answers, and command probes running real programs.
#include <catch2/catch.hpp>

#include <chrono>
#include <cmath>

#include "harness/probes/command_probe.h"
#include "harness/probes/http_probe.h"
#include "harness/probes/metric_probe.h"
#include "harness/probes/prometheus_probe.h"

namespace probe_check_test {  // this file's names, apart in a unity batch (tests/CMakeLists.txt)

using namespace chaosbench::harness;
using namespace chaosbench::harness::probes;
using namespace std::chrono_literals;

namespace {

constexpr double kNow = 1'700'000'000.0;

void add(SampleStore& store, const std::string& name, double value, double time, double received,
         chaosbench::bench::Labels labels = {}) {
  chaosbench::bench::Sample s;
  s.name = name;
  s.value = value;
  s.time = time;
  s.labels = std::move(labels);
  store.add(s, received);
}

ProbeSpec metric_probe(const std::string& stat, std::optional<double> min, std::optional<double> max) {
  ProbeSpec p;
  p.name = "p";
  p.kind = ProbeKind::kMetric;
  p.metric = "infer/error_rate";
  p.stat = stat;
  p.window = chaosbench::common::Duration{10s};
  p.min = min;
  p.max = max;
  return p;
}

}  // namespace

TEST_CASE("probes: a metric probe judges a statistic of its window of samples", "[probes]") {
  SampleStore store;
  add(store, "infer/error_rate", 99, kNow - 30, kNow - 30);           // before the window
  add(store, "infer/error_rate", 0.2, kNow - 8, kNow - 8, {{"replica", std::int64_t{0}}});
  add(store, "infer/error_rate", 0.4, kNow - 4, kNow - 4, {{"replica", std::int64_t{1}}});
  add(store, "infer/throughput", 7, kNow - 3, kNow - 3);             // another metric
  add(store, "infer/error_rate", 0.6, 0, kNow - 2, {{"replica", 1.0}});  // no sender time: its receive time
  add(store, "infer/error_rate", 50, kNow + 5, kNow - 1);             // stamped after now
  MetricProbe mean(metric_probe("mean", std::nullopt, 0.5), &store);
  auto o = mean.evaluate(kNow);
  CHECK(o.ok);
  CHECK(*o.value == Approx(0.4));
  CHECK(o.evidence == "infer/error_rate mean 0.4 over the last 10s (3 samples)");
  MetricProbe max(metric_probe("max", std::nullopt, 0.5), &store);
  o = max.evaluate(kNow);
  CHECK(!o.ok);
  CHECK(o.evidence == "infer/error_rate max 0.6 over the last 10s (3 samples) > max 0.5");
  auto labelled = metric_probe("last", 0.5, std::nullopt);
  labelled.labels = {{"replica", std::int64_t{1}}};  // 1 matches the 1.0 sent as a real number
  o = MetricProbe(labelled, &store).evaluate(kNow);
  CHECK(o.ok);
  CHECK(*o.value == Approx(0.6));
  CHECK(o.evidence == "infer/error_rate{replica=1} last 0.6 over the last 10s (2 samples)");
  o = MetricProbe(metric_probe("min", 0.3, std::nullopt), &store).evaluate(kNow);
  CHECK(o.evidence == "infer/error_rate min 0.2 over the last 10s (3 samples) < min 0.3");
  CHECK(*MetricProbe(metric_probe("sum", {}, 2), &store).evaluate(kNow).value == Approx(1.2));
  CHECK(*MetricProbe(metric_probe("count", {}, 3), &store).evaluate(kNow).value == 3);
}

TEST_CASE("probes: a metric probe without samples fails once the series reported, except a count", "[probes]") {
  SampleStore store;
  MetricProbe probe(metric_probe("mean", {}, 0.5), &store);
  auto o = probe.evaluate(kNow - 60);  // the workload is still starting: nothing to judge yet
  CHECK(o.ok);
  CHECK(o.evidence == "no samples of infer/error_rate yet");
  add(store, "infer/error_rate", 0.1, kNow - 60, kNow - 60);
  CHECK(probe.evaluate(kNow - 59).ok);
  o = probe.evaluate(kNow);  // it reported, then fell silent
  CHECK(!o.ok);
  CHECK(!o.value);
  CHECK(o.evidence == "no samples of infer/error_rate in the last 10s");
  ProbeSpec before = metric_probe("mean", {}, 0.5);
  before.mode = ProbeMode::kBefore;  // steady state needs the series seen
  CHECK(!MetricProbe(before, &store).evaluate(kNow).ok);
  o = MetricProbe(metric_probe("count", 1, {}), &store).evaluate(kNow);
  CHECK(!o.ok);
  CHECK(*o.value == 0);
  CHECK(MetricProbe(metric_probe("count", {}, 0), &store).evaluate(kNow).ok);
  CHECK(!MetricProbe(metric_probe("mean", {}, 1), nullptr).evaluate(kNow).ok);
}

TEST_CASE("probes: window statistics use the run's percentiles", "[probes]") {
  std::vector<double> v{5, 1, 4, 2, 3, 6, 7, 8, 9, 10};
  // np.percentile(v, [50, 90, 99]), as the run's stats (common/values/percentile.h).
  CHECK(window_statistic("p50", v, 0) == 5.5);
  CHECK(window_statistic("p90", v, 0) == 9.1);
  CHECK(window_statistic("p99", v, 0) == 9.91);
  CHECK(window_statistic("mean", v, 0) == Approx(5.5));
  std::vector<double> none;
  CHECK(window_statistic("count", none, 0) == 0);
  CHECK(std::isnan(window_statistic("mean", none, 0)));
}

TEST_CASE("probes: the window scan visits only the recent samples", "[probes]") {
  SampleStore store;
  // A long run: many old samples, then ten in the last 10 s.
  for (int i = 0; i < 100'000; ++i) add(store, "comm/busbw", 1, kNow - 3600 + i * 0.01, kNow - 3600 + i * 0.01);
  for (int i = 9; i >= 0; --i) add(store, "infer/error_rate", 0.1, kNow - i, kNow - i);
  std::size_t visited = 0;
  double previous = kNow + 1;
  bool newest_first = true;
  store.visit_recent(kNow - 15, [&](const StoredSample& s) {
    ++visited;
    newest_first = newest_first && s.received_at <= previous;
    previous = s.received_at;
  });
  CHECK(visited == 10);  // the old samples are never touched: a probe's cost is its window
  CHECK(newest_first);
  auto o = MetricProbe(metric_probe("mean", {}, 1), &store).evaluate(kNow);
  CHECK(o.ok);
  CHECK(*o.value == Approx(0.1));
}

TEST_CASE("probes: http answers are judged by status and JSON field", "[probes]") {
  ProbeSpec p;
  p.kind = ProbeKind::kHttp;
  CHECK(judge_http_answer(p, "GET u", 204, "").ok);
  CHECK(judge_http_answer(p, "GET u", 503, "").evidence == "GET u: status 503 (expected 2xx)");
  p.expect_status = {200, 418};
  CHECK(judge_http_answer(p, "GET u", 418, "").ok);
  CHECK(judge_http_answer(p, "GET u", 204, "").evidence == "GET u: status 204 (expected 200, 418)");
  p.expect_status.clear();
  p.json_field = "/data/queue";
  p.max = 10;
  auto o = judge_http_answer(p, "GET u", 200, R"({"data": {"queue": 12}})");
  CHECK(!o.ok);
  CHECK(*o.value == 12);
  CHECK(o.evidence == "GET u: /data/queue is 12 > max 10");
  CHECK(judge_http_answer(p, "GET u", 200, R"({"data": {"queue": 3}})").ok);
  CHECK(judge_http_answer(p, "GET u", 200, R"({"data": {}})").evidence == "GET u: status 200, the answer has no /data/queue");
  CHECK(judge_http_answer(p, "GET u", 200, R"({"data": {"queue": "3"}})").evidence ==
        "GET u: /data/queue is \"3\", not a number or true/false");
  CHECK(judge_http_answer(p, "GET u", 200, "not json").evidence == "GET u: status 200, the answer is not valid JSON");
  CHECK(!judge_http_answer(p, "GET u", 200, std::string(100000, '[')).ok);  // too deep: refused, no crash
  p.max.reset();
  p.min = 1;
  p.json_field = "/ready";
  CHECK(judge_http_answer(p, "GET u", 200, R"({"ready": true})").ok);
  CHECK(!judge_http_answer(p, "GET u", 200, R"({"ready": false})").ok);
  p.min.reset();
  p.equals = "ok";
  CHECK(judge_http_answer(p, "GET u", 200, R"({"ready": "ok"})").ok);
  CHECK(judge_http_answer(p, "GET u", 200, R"({"ready": "degraded"})").evidence == "GET u: /ready is \"degraded\", expected \"ok\"");
  p.equals = "true";
  CHECK(judge_http_answer(p, "GET u", 200, R"({"ready": true})").ok);
}

TEST_CASE("probes: Prometheus answers and query URLs", "[probes]") {
  CHECK(instant_query_url("http://p:9090/", "sum(rate(x{job=\"a b\"}[1m])) > 0.5") ==
        "http://p:9090/api/v1/query?query=sum%28rate%28x%7Bjob%3D%22a%20b%22%7D%5B1m%5D%29%29%20%3E%200.5");
  ProbeSpec p;
  p.kind = ProbeKind::kPrometheus;
  p.query = "up";
  p.min = 1;
  auto o = judge_prometheus_answer(p, "GET p", 200, R"({"status":"success","data":{"resultType":"vector","result":[
      {"metric":{"__name__":"up","job":"node"},"value":[1712.5,"0"]},{"metric":{},"value":[1712.5,"1"]}]}})");
  CHECK(!o.ok);
  CHECK(*o.value == 0);
  CHECK(o.evidence == "up = 0{__name__=up, job=node} (first of 2 samples) < min 1");
  o = judge_prometheus_answer(p, "GET p", 200, R"({"status":"success","data":{"resultType":"scalar","result":[1712.5,"+Inf"]}})");
  CHECK(o.ok);
  CHECK(std::isinf(*o.value));
  o = judge_prometheus_answer(p, "GET p", 200, R"({"status":"success","data":{"resultType":"vector","result":[]}})");
  CHECK(o.evidence == "GET p: the query returned no samples (up)");
  o = judge_prometheus_answer(p, "GET p", 400, R"({"status":"error","errorType":"bad_data","error":"1:4: parse error"})");
  CHECK(o.evidence == "GET p: the query failed (bad_data): 1:4: parse error");
  o = judge_prometheus_answer(p, "GET p", 200, R"({"status":"success","data":{"resultType":"matrix","result":[]}})");
  CHECK_THAT(o.evidence, Catch::Contains("the answer is a matrix"));
  o = judge_prometheus_answer(p, "GET p", 200, R"({"status":"success","data":{"resultType":"scalar","result":[1, "x"]}})");
  CHECK(o.evidence == "GET p: the first sample has no readable value");
  CHECK(judge_prometheus_answer(p, "GET p", 502, "<html>bad gateway</html>").evidence ==
        "GET p: status 502, not a Prometheus API answer (not valid JSON)");
  p.min.reset();
  p.max = 0;
  o = judge_prometheus_answer(p, "GET p", 200, R"({"status":"success","data":{"resultType":"scalar","result":[1,"NaN"]}})");
  CHECK(!o.ok);
}

TEST_CASE("probes: a command probe passes on exit 0 in time, and says why otherwise", "[probes]") {
  ProbeSpec p;
  p.kind = ProbeKind::kCommand;
  p.timeout = chaosbench::common::Duration{500ms};
  p.argv = {"true"};
  CHECK(CommandProbe(p, {}).evaluate(kNow).ok);
  p.argv = {"sh", "-c", "echo first >&2; echo 'no route to replica' >&2; exit 3"};
  auto o = CommandProbe(p, {}).evaluate(kNow);
  CHECK(!o.ok);
  CHECK(*o.value == 3);
  CHECK(o.evidence == "sh exited 3: no route to replica");
  p.argv = {"sleep", "5"};
  const auto start = std::chrono::steady_clock::now();
  o = CommandProbe(p, {}).evaluate(kNow);
  CHECK(std::chrono::steady_clock::now() - start < 3s);
  CHECK(!o.ok);
  CHECK(o.evidence == "sleep did not exit within 500ms (killed)");
  p.argv = {"echo", "{node.0.addr}"};
  o = CommandProbe(p, {}).evaluate(kNow);  // no address known: a failure, not a throw
  CHECK(!o.ok);
  CHECK(o.evidence == "could not evaluate: no address is known for node 0");
  ProbeContext ctx;
  ctx.address = [](int) { return std::string("10.0.0.7"); };
  p.argv = {"sh", "-c", "test \"$0\" = 10.0.0.7", "{node.0.addr}"};
  CHECK(CommandProbe(p, ctx).evaluate(kNow).ok);
  p.argv = {"/nonexistent/program"};
  CHECK(!CommandProbe(p, {}).evaluate(kNow).ok);
  CHECK(last_line("a\nb\n\n") == "b");
  CHECK(last_line("x\ty\x1b") == "x?y?");
  // Cut on a character's boundary: "é" is two bytes, never split.
  CHECK(last_line(std::string(196, 'a') + "\xc3\xa9zzzz") == std::string(196, 'a') + "...");
}

TEST_CASE("probes: a Prometheus error's text reaches the evidence without control characters", "[probes]") {
  ProbeSpec p;
  p.query = "up";
  const auto o = judge_prometheus_answer(p, "GET q", 400,
                                         R"({"status":"error","errorType":"bad_data","error":"x\u001b[2Jy"})");
  CHECK(!o.ok);
  CHECK(o.evidence == "GET q: the query failed (bad_data): x?[2Jy");
}

}  // namespace probe_check_test
