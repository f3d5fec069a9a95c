// The probes and abort sections: what they accept, and each rule's error at its path.
#include <catch2/catch.hpp>

#include "harness/scenario/diagnostic.h"
#include "harness/scenario/scenario_loader.h"

namespace probe_parser_test {  // this file's names, apart in a unity batch (tests/CMakeLists.txt)

using namespace chaosbench::harness;

namespace {

// A two-node command scenario with one fault "loss", plus `extra` top-level keys.
std::string scenario_with(const std::string& extra, const std::string& cluster = R"({"nodes": 2})") {
  return R"({"schema_version": 1, "name": "t", "cluster": )" + cluster +
         R"(, "workload": {"kind": "command", "argv": ["sleep", "1"]},
  "faults": [{"name": "loss", "type": "network.loss", "target": {"nodes": [1]}, "percent": "10%", "at": "1s", "duration": "2s"}],
  )" + extra + "}";
}

std::string probes_with(const std::string& probe) { return scenario_with(R"("probes": [)" + probe + "]"); }

std::vector<Diagnostic> diagnostics_of(const std::string& text, const LoadOptions& options = {}) {
  try {
    auto r = parse_scenario(text, "s.json", options);
    return r.warnings;
  } catch (const ScenarioError& e) {
    return e.diagnostics();
  }
}

// "path: message" of the first diagnostic (an error, or else a warning), or "(valid)".
std::string first(const std::string& text, const LoadOptions& options = {}) {
  auto ds = diagnostics_of(text, options);
  return ds.empty() ? std::string("(valid)") : ds.front().path + ": " + ds.front().message;
}

const char* kErrorRate = R"({"name": "errors", "kind": "metric", "metric": "infer/error_rate", "max": 0.05})";

}  // namespace

TEST_CASE("probes: each kind parses with its defaults and abort names them", "[probes]") {
  auto s = parse_scenario(scenario_with(R"J("probes": [
      {"name": "errors", "kind": "metric", "metric": "infer/error_rate", "labels": {"replica": 1}, "stat": "p99",
       "window": "5s", "max": "5%", "mode": "during:loss", "interval": "500ms"},
      {"name": "ready", "kind": "http", "url": "http://{node.0.addr}:8000/v2/health/ready", "node": 1,
       "expect_status": [200, 204], "json_field": "/ready", "equals": "true", "mode": "before"},
      {"name": "alive", "kind": "command", "argv": ["true"], "timeout": "300ms", "mode": "after"},
      {"name": "prom", "kind": "prometheus", "url": "http://127.0.0.1:9090/", "query": "sum(up)", "min": 1}],
    "abort": {"when": ["errors", "prom"], "for": "3s"})J"), "s.json").scenario;
  REQUIRE(s.probes.size() == 4);
  const auto& m = s.probes[0];
  CHECK(m.kind == ProbeKind::kMetric);
  CHECK(m.mode == ProbeMode::kDuring);
  CHECK(m.during == "loss");
  CHECK(probe_mode_text(m) == "during:loss");
  CHECK(m.stat == "p99");
  CHECK(m.window.value == std::chrono::seconds(5));
  CHECK(m.interval.value == std::chrono::milliseconds(500));
  CHECK(*m.max == Approx(5));  // infer/error_rate is in %: "5%" is 5
  CHECK(std::get<std::int64_t>(m.labels.at("replica")) == 1);
  const auto& h = s.probes[1];
  CHECK(h.kind == ProbeKind::kHttp);
  CHECK(h.node == 1);
  CHECK(h.expect_status == std::vector<int>{200, 204});
  CHECK(*h.equals == "true");
  CHECK(h.timeout.value == std::chrono::seconds(1));  // the interval
  const auto& c = s.probes[2];
  CHECK(c.kind == ProbeKind::kCommand);
  CHECK(c.node == -1);
  CHECK(c.timeout.value == std::chrono::milliseconds(300));
  CHECK(s.probes[3].query == "sum(up)");
  REQUIRE(s.abort);
  CHECK(s.abort->when == std::vector<std::string>{"errors", "prom"});
  CHECK(s.abort->for_.value == std::chrono::seconds(3));
}

TEST_CASE("probes: names, kinds and keys are checked at their paths", "[probes]") {
  CHECK(first(probes_with(R"({"kind": "metric", "metric": "x/y", "max": 1})")) == "probes[0]: missing required key \"name\" (a name such as \"error-rate\")");
  CHECK(first(probes_with(R"({"name": "Bad Name", "kind": "command", "argv": ["true"]})")) ==
        "probes[0].name: expected 1 to 64 of a-z 0-9 . _ -, starting with a letter or digit; got \"Bad Name\"");
  CHECK(first(probes_with(std::string(kErrorRate) + "," + kErrorRate)) == "probes[1].name: two probes are named \"errors\"");
  CHECK_THAT(first(probes_with(R"({"name": "a", "kind": "metrc"})")),
             Catch::StartsWith("probes[0].kind: expected one of") && Catch::Contains("(did you mean \"metric\"?)"));
  CHECK(first(probes_with(R"({"name": "a", "kind": "command", "argv": ["true"], "metrik": "x"})")) ==
        "probes[0].metrik: unknown key (did you mean \"metric\"?)");
  CHECK(first(probes_with(R"({"name": "a", "kind": "metric", "metric": "infer/error_rate", "max": 1, "url": "http://x/"})")) ==
        "probes[0].url: a metric probe takes no \"url\" (it takes: metric, labels, stat, window, min, max)");
  CHECK_THAT(first(probes_with(R"({"name": "a", "kind": "metric", "metric": "infer/error_rate", "max": 1, "timeout": "1s"})")),
             Catch::StartsWith("probes[0].timeout: a metric probe takes no \"timeout\""));
}

TEST_CASE("probes: each kind's required keys", "[probes]") {
  CHECK(first(probes_with(R"({"name": "a", "kind": "metric", "max": 1})")) ==
        "probes[0]: missing required key \"metric\" (a metric name such as \"infer/error_rate\")");
  CHECK(first(probes_with(R"({"name": "a", "kind": "metric", "metric": "infer/error_rate"})")) ==
        "probes[0]: a metric probe needs \"min\" or \"max\" (or both)");
  CHECK(first(probes_with(R"({"name": "a", "kind": "prometheus", "url": "http://p:9090", "max": 1})")) ==
        "probes[0]: missing required key \"query\" (a PromQL expression such as \"sum(rate(http_errors_total[30s]))\")");
  CHECK(first(probes_with(R"({"name": "a", "kind": "prometheus", "url": "http://p:9090", "query": "up"})")) ==
        "probes[0]: a prometheus probe needs \"min\" or \"max\" (or both)");
  CHECK_THAT(first(probes_with(R"({"name": "a", "kind": "http"})")), Catch::StartsWith("probes[0]: missing required key \"url\""));
  CHECK_THAT(first(probes_with(R"({"name": "a", "kind": "command"})")), Catch::StartsWith("probes[0]: missing required key \"argv\""));
  CHECK(first(probes_with(R"({"name": "a", "kind": "command", "argv": []})")) ==
        "probes[0].argv: expected a non-empty array of strings, got an empty array");
  CHECK(first(probes_with(R"({"name": "a", "kind": "metric", "metric": "infer/error_rate", "min": 2, "max": 1})")) ==
        "probes[0]: min (2) is larger than max (1)");
}

TEST_CASE("probes: modes, timing, stats and nodes", "[probes]") {
  CHECK(first(probes_with(R"({"name": "a", "kind": "command", "argv": ["true"], "mode": "during:los"})")) ==
        "probes[0].mode: no fault is named \"los\" (faults: loss)");
  CHECK(first(probes_with(R"({"name": "a", "kind": "command", "argv": ["true"], "mode": "sometimes"})")) ==
        "probes[0].mode: expected \"before\", \"continuous\", \"during:FAULT\" or \"after\", got \"sometimes\"");
  CHECK(first(probes_with(R"({"name": "a", "kind": "command", "argv": ["true"], "interval": "50ms"})")) ==
        "probes[0].interval: expected a duration from 100ms to 1h, got 50ms");
  CHECK(first(probes_with(R"({"name": "a", "kind": "command", "argv": ["true"], "interval": "1s", "timeout": "2s"})")) ==
        "probes[0].timeout: 2s is longer than the interval (1s): an evaluation must be over before the next is due");
  CHECK_THAT(first(probes_with(R"({"name": "a", "kind": "metric", "metric": "infer/error_rate", "max": 1, "stat": "p95"})")),
             Catch::StartsWith("probes[0].stat: expected one of \"mean\", \"min\", \"max\", \"p50\", \"p90\", \"p99\", \"sum\", \"count\", \"last\""));
  CHECK(first(probes_with(R"({"name": "a", "kind": "command", "argv": ["true"], "node": 2})")) ==
        "probes[0].node: expected an integer from 0 to 1, got 2");
  CHECK(first(probes_with(R"({"name": "a", "kind": "metric", "metric": "infer/error_rate", "max": 1, "window": "0s"})")) ==
        "probes[0].window: expected a duration greater than zero");
}

TEST_CASE("probes: urls, placeholders, JSON pointers and statuses", "[probes]") {
  CHECK(first(probes_with(R"({"name": "a", "kind": "http", "url": "ftp://x/"})")) ==
        "probes[0].url: the URL must start with http:// or https://");
  CHECK(first(probes_with(R"({"name": "a", "kind": "http", "url": "http://{node.2.addr}/"})")) ==
        "probes[0].url: \"{node.2.addr}\": the cluster has nodes 0 to 1");
  CHECK(first(probes_with(R"({"name": "a", "kind": "http", "url": "http://{master_addr}/"})")) ==
        "probes[0].url: \"{master_addr}\": a probe knows only {node.N.addr}, the address of node N");
  CHECK(first(probes_with(R"({"name": "a", "kind": "command", "argv": ["curl", "{node.0.addr:sh}"]})")) ==
        "probes[0].argv[1]: a probe's placeholders take no :sh (no shell runs a probe)");
  CHECK_THAT(first(probes_with(R"({"name": "a", "kind": "http", "url": "http://x/", "json_field": "ready", "equals": "1"})")),
             Catch::StartsWith("probes[0].json_field: expected a JSON pointer such as \"/data/ready\""));
  CHECK_THAT(first(probes_with(R"({"name": "a", "kind": "http", "url": "http://x/", "json_field": "/a~2", "equals": "1"})")),
             Catch::StartsWith("probes[0].json_field: expected a JSON pointer"));
  CHECK(first(probes_with(R"({"name": "a", "kind": "http", "url": "http://x/", "max": 3})")) ==
        "probes[0]: \"min\", \"max\" and \"equals\" check a field of the answer: give \"json_field\" too");
  CHECK(first(probes_with(R"({"name": "a", "kind": "http", "url": "http://x/", "json_field": "/a", "equals": "x", "max": 3})")) ==
        "probes[0]: give \"equals\" (the field's text) or \"min\"/\"max\" (its number), not both");
  CHECK(first(probes_with(R"({"name": "a", "kind": "http", "url": "http://x/", "json_field": "/a"})")) ==
        "probes[0]: \"json_field\" needs \"equals\", \"min\" or \"max\": what the field must be");
  CHECK(first(probes_with(R"({"name": "a", "kind": "http", "url": "http://x/", "expect_status": [200, 200]})")) ==
        "probes[0].expect_status[1]: 200 is listed twice");
  CHECK(first(probes_with(R"({"name": "a", "kind": "http", "url": "http://x/", "expect_status": [99]})")) ==
        "probes[0].expect_status[0]: expected an integer from 100 to 599, got 99");
}

TEST_CASE("probes: metric names, catalogue suggestions and limits in the metric's unit", "[probes]") {
  CHECK(first(probes_with(R"({"name": "a", "kind": "metric", "metric": "infer/eror_rate", "max": 1})")) ==
        "probes[0].metric: \"infer/eror_rate\" is not in the catalogue (`chaosbench metrics`) (did you mean "
        "\"infer/error_rate\"?); fine for a metric your workload sends itself");
  // Scraped names (Prometheus', renamed with ':') and a workload's own pass without a word.
  CHECK(first(probes_with(R"({"name": "a", "kind": "metric", "metric": "http_requests_total:rate", "max": 1})")) == "(valid)");
  CHECK(first(probes_with(R"({"name": "a", "kind": "metric", "metric": "node_load1", "max": 1})")) == "(valid)");
  CHECK_THAT(first(probes_with(R"({"name": "a", "kind": "metric", "metric": "has space", "max": 1})")),
             Catch::StartsWith("probes[0].metric: expected a metric name"));
  CHECK_THAT(first(probes_with(R"({"name": "a", "kind": "metric", "metric": "my_thing", "max": "5%"})")),
             Catch::Contains("cannot be converted into this metric's unit (none)"));
  auto s = parse_scenario(probes_with(R"({"name": "a", "kind": "metric", "metric": "infer/latency", "stat": "p99", "max": "250ms"})"), "s.json");
  CHECK(*s.scenario.probes[0].max == Approx(250));  // infer/latency is in ms
}

TEST_CASE("probes: command probes are refused in the agent modes, before probes without faults warn", "[probes]") {
  const std::string agents = scenario_with(R"("probes": [{"name": "a", "kind": "command", "argv": ["true"]}])",
                                           R"({"nodes": 2, "mode": "local-agents"})");
  CHECK(first(agents) == "probes[0].kind: command probes are not supported across hosts yet (cluster.mode runs agents): "
                         "use an http or prometheus probe");
  const std::string no_faults = R"({"schema_version": 1, "name": "t", "cluster": {"nodes": 2},
    "workload": {"kind": "command", "argv": ["sleep", "1"]},
    "probes": [{"name": "up", "kind": "command", "argv": ["true"], "mode": "before"}]})";
  auto r = parse_scenario(no_faults, "s.json");
  REQUIRE(r.warnings.size() == 1);
  CHECK(r.warnings[0].path == "probes[0].mode");
  CHECK_THAT(r.warnings[0].message, Catch::Contains("this scenario has none"));
}

TEST_CASE("probes: abort names existing probes, once each, for a duration >= 0", "[probes]") {
  const std::string probe = std::string(R"("probes": [)") + kErrorRate + "],";
  CHECK(first(scenario_with(probe + R"("abort": {"when": ["erors"]})")) ==
        "abort.when[0]: no probe is named \"erors\" (did you mean \"errors\"?) (probes: errors)");
  CHECK(first(scenario_with(R"("abort": {"when": ["x"]})")) == "abort.when[0]: no probe is named \"x\": the scenario has no probes");
  CHECK(first(scenario_with(probe + R"("abort": {"when": []})")) == "abort.when: expected a non-empty array of probe names, got an empty array");
  CHECK(first(scenario_with(probe + R"("abort": {"when": ["errors", "errors"]})")) == "abort.when[1]: \"errors\" is listed twice");
  CHECK_THAT(first(scenario_with(probe + R"("abort": {"when": ["errors"], "for": "-1s"})")), Catch::StartsWith("abort.for:") && Catch::Contains("negative"));
  CHECK(first(scenario_with(probe + R"("abort": {"for": "1s"})")) ==
        "abort: missing required key \"when\" (the names of the probes whose failure stops the run, such as [\"error-rate\"])");
  CHECK(first(scenario_with(probe + R"("abort": {"when": ["errors"], "after": "1s"})")) == "abort.after: unknown key");
  auto s = parse_scenario(scenario_with(probe + R"("abort": {"when": ["errors"]})"), "s.json").scenario;
  CHECK(s.abort->for_.value.count() == 0);
}

TEST_CASE("probes: errors point at the line and column, --set and sweeps reach probes", "[probes]") {
  const std::string text = "{\"schema_version\": 1, \"name\": \"t\", \"cluster\": {\"nodes\": 2},\n"
                           "\"workload\": {\"kind\": \"command\", \"argv\": [\"true\"]},\n"
                           "\"probes\": [{\"name\": \"a\", \"kind\": \"command\",\n   \"argv\": [\"true\"], \"interval\": \"1ms\"}]}";
  auto ds = diagnostics_of(text);
  REQUIRE(!ds.empty());
  CHECK(ds[0].line == 4);
  CHECK(ds[0].column == 34);
  LoadOptions set;
  set.overrides = {"probes.0.max=0.5", "abort.for=2s"};
  const std::string base = scenario_with(std::string(R"("probes": [)") + kErrorRate + R"(], "abort": {"when": ["errors"]})");
  auto s = parse_scenario(base, "s.json", set).scenario;
  CHECK(*s.probes[0].max == Approx(0.5));
  CHECK(s.abort->for_.value == std::chrono::seconds(2));
  LoadOptions bad;
  bad.overrides = {"probes.0.interval=10ms"};
  CHECK_THAT(first(base, bad), Catch::StartsWith("probes[0].interval: expected a duration from 100ms"));
  const std::string swept = scenario_with(std::string(R"("probes": [)") + kErrorRate +
                                          R"(], "sweep": {"probes.0.interval": ["1s", "5ms"]})");
  CHECK_THAT(first(swept), Catch::StartsWith("sweep: point 2") && Catch::Contains("probes[0].interval"));
}

}  // namespace probe_parser_test
