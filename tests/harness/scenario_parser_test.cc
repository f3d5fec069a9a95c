#include <catch2/catch.hpp>

#include <filesystem>

#include "harness/scenario/diagnostic.h"
#include "harness/scenario/placeholders.h"
#include "harness/scenario/scenario_loader.h"
#include "harness/scenario/suggest.h"

namespace scenario_parser_test {  // this file's names, apart in a unity batch (tests/CMakeLists.txt)

using namespace chaosbench::harness;

namespace {

// Parses and returns the diagnostics (empty when valid).
std::vector<Diagnostic> errors_of(const std::string& text, const LoadOptions& options = {}) {
  try {
    parse_scenario(text, "s.json", options);
  } catch (const ScenarioError& e) {
    return e.diagnostics();
  }
  return {};
}

std::string first_error(const std::string& text, const LoadOptions& options = {}) {
  auto ds = errors_of(text, options);
  return ds.empty() ? std::string("(valid)") : format_diagnostic(ds.front());
}

const char* kMinimal = R"({
  "schema_version": 1,
  "name": "t",
  "cluster": { "nodes": 2 },
  "workload": { "kind": "collective" }
})";

}  // namespace

TEST_CASE("scenario: a minimal collective scenario gets the documented defaults", "[scenario]") {
  auto s = parse_scenario(kMinimal, "s.json").scenario;
  CHECK(s.name == "t");
  CHECK(s.cluster.nodes == 2);
  CHECK(s.seed == 42);
  const auto& w = std::get<CollectiveWorkload>(s.workload);
  CHECK(w.collectives == std::vector<std::string>{"allreduce"});
  CHECK(w.min_size.bytes == 1024);
  CHECK(w.max_size.bytes == 16u << 20);
  CHECK(w.iters == 20);
}

TEST_CASE("scenario: unknown keys are located at the key and suggest the near miss", "[scenario]") {
  std::string text = "{\n  \"schema_version\": 1,\n  \"name\": \"t\", \"cluster\": {\"nodes\": 2},\n  \"workload\": { \"kind\": \"collective\", \"itres\": 5 }\n}";
  CHECK(first_error(text) == "s.json:4:39: workload.itres: unknown key (did you mean \"iters\"?)");
}

TEST_CASE("scenario: wrong types and ranges name the path and what was expected", "[scenario]") {
  std::string text = R"({"schema_version": 1, "name": "t", "cluster": {"nodes": "4"}, "workload": {"kind": "collective"}})";
  CHECK_THAT(first_error(text), Catch::Contains("cluster.nodes: expected an integer from 1 to 64, got a string (\"4\")"));
  std::string zero = R"({"schema_version": 1, "name": "t", "cluster": {"nodes": 0}, "workload": {"kind": "collective"}})";
  CHECK_THAT(first_error(zero), Catch::Contains("got 0"));
}

TEST_CASE("scenario: bad quantities are clear errors at the value", "[scenario]") {
  auto with_at = [](const std::string& at) {
    return R"({"schema_version": 1, "name": "t", "cluster": {"nodes": 2}, "workload": {"kind": "collective"},
               "faults": [{"type": "marker", "at": )" + at + "}]}";
  };
  CHECK_THAT(first_error(with_at("\"20 ms\"")), Catch::Contains("faults[0].at: expected a duration") &&
                                                    Catch::Contains("no spaces"));
  CHECK_THAT(first_error(with_at("\"20\"")), Catch::Contains("unit is missing"));
  CHECK_THAT(first_error(with_at("\"-1s\"")), Catch::Contains("negative"));
  CHECK_THAT(first_error(with_at("20")), Catch::Contains("as a string with a unit"));
  CHECK(first_error(with_at("\"1.5s\"")) == "(valid)");
}

TEST_CASE("scenario: every error is reported, in file order", "[scenario]") {
  std::string text = "{\n\"schema_version\": 1,\n\"name\": \"t\", \"cluster\": {\"nodes\": 2},\n\"bogus\": 1,\n"
                     "\"workload\": {\"kind\": \"collective\", \"iters\": -1, \"check\": \"yes\"}\n}";
  auto ds = errors_of(text);
  REQUIRE(ds.size() == 3);
  CHECK(ds[0].path == "bogus");
  CHECK(ds[0].line == 4);
  CHECK(ds[1].path == "workload.iters");
  CHECK(ds[2].path == "workload.check");
}

TEST_CASE("scenario: missing required keys are reported at their object", "[scenario]") {
  auto ds = errors_of("{\n  \"schema_version\": 1,\n  \"name\": \"t\"\n}");
  REQUIRE(ds.size() == 1);
  CHECK(format_diagnostic(ds[0]) == "s.json:1:1: (root): missing required key \"workload\" (what to run: an object with \"kind\")");
}

TEST_CASE("scenario: syntax errors give line and column of where parsing stopped", "[scenario]") {
  auto ds = errors_of("{\n  \"schema_version\": 1,\n  \"name\": \"t\",\n}");
  REQUIRE(ds.size() == 1);
  CHECK(ds[0].line == 4);
  CHECK(ds[0].column == 1);
  CHECK_THAT(ds[0].message, Catch::StartsWith("invalid JSON"));
}

TEST_CASE("scenario: columns count characters, not bytes", "[scenario]") {
  std::string text = "{\"description\": \"ü–ß\", \"nodez\": 1, \"schema_version\": 1, \"name\": \"t\", \"cluster\": {\"nodes\": 2}, \"workload\": {\"kind\": \"collective\"}}";
  auto ds = errors_of(text);
  REQUIRE(ds.size() == 1);
  CHECK(ds[0].column == 24);  // 21 bytes of "ü–ß" are 5 characters
}

TEST_CASE("scenario: --set overrides are typed like the file", "[scenario]") {
  LoadOptions o;
  o.overrides = {"workload.iters=7", "cluster.nodes=3", "workload.collectives=[\"broadcast\"]",
                 "faults=[{\"type\":\"marker\",\"at\":\"1s\"}]", "faults[0].duration=250ms"};
  auto s = parse_scenario(kMinimal, "s.json", o).scenario;
  CHECK(std::get<CollectiveWorkload>(s.workload).iters == 7);
  CHECK(s.cluster.nodes == 3);
  CHECK(std::get<CollectiveWorkload>(s.workload).collectives == std::vector<std::string>{"broadcast"});
  REQUIRE(s.faults.size() == 1);
  CHECK(s.faults[0].duration->value == std::chrono::milliseconds(250));
  CHECK_THAT(s.resolved_json, Catch::Contains("\"iters\":7"));
}

TEST_CASE("scenario: errors in overridden values name the --set", "[scenario]") {
  LoadOptions o;
  o.overrides = {"workload.iters=abc"};
  CHECK(first_error(kMinimal, o) ==
        "s.json: --set workload.iters=abc: workload.iters: expected an integer from 1 to 100000, got a string (\"abc\")");
  o.overrides = {"workload.itres=5"};
  CHECK_THAT(first_error(kMinimal, o), Catch::Contains("--set workload.itres=5: workload.itres: unknown key (did you mean \"iters\"?)"));
  o.overrides = {"name.x=1"};
  CHECK_THAT(first_error(kMinimal, o), Catch::Contains("is a string, so it has no \"x\""));
  o.overrides = {"noequals"};
  CHECK_THAT(first_error(kMinimal, o), Catch::Contains("expected KEY=VALUE"));
}

TEST_CASE("scenario: fault envelope rules", "[scenario]") {
  auto faults = [](const std::string& f) {
    return R"({"schema_version": 1, "name": "t", "cluster": {"nodes": 4}, "workload": {"kind": "collective"}, "faults": [)" +
           f + "]}";
  };
  CHECK_THAT(first_error(faults(R"({"type": "marker", "at": "1s", "at_step": 3})")), Catch::Contains("both \"at\" and \"at_step\""));
  CHECK_THAT(first_error(faults(R"({"type": "marker"})")), Catch::Contains("missing a trigger"));
  CHECK_THAT(first_error(faults(R"({"type": "markr", "at": "1s"})")), Catch::Contains("did you mean \"marker\""));
  CHECK_THAT(first_error(faults(R"({"type": "marker", "at": "1s", "target": {"nodes": [4]}})")),
             Catch::Contains("faults[0].target.nodes[0]: expected an integer from 0 to 3, got 4"));
  CHECK_THAT(first_error(faults(R"({"type": "marker", "at": "1s", "duration": "5s", "repeat": {"every": "2s", "count": 3}})")),
             Catch::Contains("must be shorter than \"every\""));
  CHECK_THAT(first_error(faults(R"({"type": "marker", "name": "a", "at": "1s"}, {"type": "marker", "name": "a", "at": "2s"})")),
             Catch::Contains("two faults are named \"a\""));
  auto ok = parse_scenario(faults(R"({"type": "marker", "at": "1s", "duration": "1s", "repeat": {"every": "2s", "count": 3},
                                      "target": {"percent": "50%"}})"), "s.json").scenario;
  REQUIRE(ok.faults.size() == 1);
  CHECK(ok.faults[0].name == "marker-0");
  CHECK(ok.faults[0].repeat->count == 3);
}

TEST_CASE("scenario: checks convert quantity limits into the metric's unit", "[scenario]") {
  std::string text = R"({"schema_version": 1, "name": "t", "cluster": {"nodes": 2}, "workload": {"kind": "collective"}, "checks": [
    {"metric": "resilience/time_to_recover", "max": "30s"},
    {"metric": "comm/latency", "stat": "p99", "max": "2ms"},
    {"metric": "ckpt/size", "max": "1GB"}]})";
  auto s = parse_scenario(text, "s.json").scenario;
  REQUIRE(s.checks.size() == 3);
  CHECK(*s.checks[0].max == Approx(30));
  CHECK(*s.checks[1].max == Approx(2000));
  CHECK(*s.checks[2].max == Approx(1e9));
  CHECK_THAT(first_error(R"({"schema_version": 1, "name": "t", "cluster": {"nodes": 2}, "workload": {"kind": "collective"}, "checks": [{"metric": "comm/busbw"}]})"),
             Catch::Contains("needs \"min\" or \"max\""));
}

TEST_CASE("scenario: command workloads check their placeholders", "[scenario]") {
  std::string text = R"({"schema_version": 1, "name": "t", "cluster": {"nodes": 2}, "workload": {"kind": "command",
    "argv": ["prog", "{node.1.addr}", "{rnak}"]}})";
  CHECK_THAT(first_error(text), Catch::Contains("workload.argv[2]: unknown placeholder \"{rnak}\""));
  CHECK(check_placeholders("{node.2.addr}", 2).has_value());
  CHECK_FALSE(check_placeholders("a {{literal}} {rank}", 2).has_value());
  auto out = expand_placeholders("x{rank}y{{z}}", [](std::string_view n) { return std::string(n == "rank" ? "3" : "?"); });
  CHECK(out == "x3y{z}");
}

TEST_CASE("scenario: did-you-mean only suggests likely typos", "[scenario]") {
  CHECK(did_you_mean("worklaod", {"workload", "faults"}) == "workload");
  CHECK_FALSE(did_you_mean("zzzzzz", {"workload", "faults"}).has_value());
}

TEST_CASE("scenario: every example scenario in scenarios/ is valid", "[scenario]") {
  std::size_t seen = 0;
  for (const char* dir : {"scenarios", "perf/scenarios"}) {
    for (const auto& e : std::filesystem::directory_iterator(std::string(CHAOSBENCH_SOURCE_DIR) + "/" + dir)) {
      if (e.path().extension() != ".json" || e.path().filename() == "schema.json") continue;
      INFO(e.path().string());
      CHECK_NOTHROW(load_scenario(e.path().string()));
      ++seen;
    }
  }
  CHECK(seen >= 10);
}

TEST_CASE("scenario: a key given twice in one object is an error at the repeat", "[scenario]") {
  std::string text = "{\"schema_version\": 1, \"name\": \"t\", \"cluster\": {\"nodes\": 2},\n \"workload\": {\"kind\": \"collective\", \"iters\": 5, \"iters\": 50}}";
  auto ds = errors_of(text);
  REQUIRE(ds.size() == 1);
  CHECK(format_diagnostic(ds[0]) ==
        "s.json:2:49: workload.iters: duplicate key: it is already set above in the same object (only the last would count)");
}

TEST_CASE("scenario: locations survive escapes, a BOM, and keys with dots", "[scenario]") {
  // An escaped key is the same key: "\u0069ters" is "iters", so writing both is a duplicate.
  std::string escaped = "{\"schema_version\": 1, \"name\": \"t\", \"cluster\": {\"nodes\": 2},\n"
                        "\"workload\": {\"kind\": \"collective\", \"iters\": 5, \"\\u0069ters\": 6}}";
  auto ds = errors_of(escaped);
  REQUIRE(ds.size() == 1);
  CHECK(ds[0].line == 2);
  CHECK(ds[0].column == 48);
  // A byte order mark is skipped and takes no column.
  std::string bom = "\xEF\xBB\xBF{\"schema_version\": 1, \"name\": \"t\", \"cluster\": {\"nodes\": 2},\n"
                    "\"workload\": {\"kind\": \"collective\", \"iters\": \"x\"}}";
  auto b = errors_of(bom);
  REQUIRE(b.size() == 1);
  CHECK(b[0].line == 2);
  CHECK(b[0].column == 45);
  // A repeated object is one duplicate, not one per child; "x.y" and x{y} do not collide.
  std::string twice = "{\"schema_version\": 1, \"name\": \"t\", \"cluster\": {\"nodes\": 2}, \"cluster\": {\"nodes\": 3},"
                      "\"workload\": {\"kind\": \"collective\"}, \"checks\": [{\"metric\": \"comm/busbw\", \"min\": 0,"
                      "\"labels\": {\"x.y\": 1, \"x\": 2}}]}";
  auto t = errors_of(twice);
  REQUIRE(t.size() == 1);
  CHECK(t[0].path == "cluster");
}

TEST_CASE("scenario: numbers too large for a double are located", "[scenario]") {
  auto ds = errors_of("{\"schema_version\": 1,\n \"seed\": 1e400}");
  REQUIRE(ds.size() == 1);
  CHECK(ds[0].line == 2);
  CHECK(ds[0].column == 10);
  CHECK_THAT(ds[0].message, Catch::Contains("number overflow"));
}

TEST_CASE("scenario: quantities beyond their type's range are refused, not wrapped", "[scenario]") {
  CHECK_THAT(first_error(kMinimal, LoadOptions{{"timeout=9999999999999999999999h"}, {}}), Catch::Contains("too large"));
  CHECK_THAT(first_error(kMinimal, LoadOptions{{"workload.sizes.max=2GiB"}, {}}), Catch::Contains("less than 2GiB"));
  CHECK_THAT(first_error(kMinimal, LoadOptions{{"workload.timeout=500us"}, {}}), Catch::Contains("at least 1ms"));
  CHECK_THAT(first_error(kMinimal, LoadOptions{{"cluster.nodes=1"}, {}}), Catch::Contains("at least 2 ranks"));
  CHECK_THAT(first_error(kMinimal, LoadOptions{{"cluster.nodes=64", "cluster.ranks_per_node=2"}, {}}),
             Catch::Contains("at most 64 ranks"));
  // An override that creates an object the file never had is blamed on the --set.
  CHECK_THAT(first_error(kMinimal, LoadOptions{{"a.b.c=1"}, {}}), Catch::StartsWith("s.json: --set a.b.c=1: a: unknown key"));
}

TEST_CASE("scenario: a train workload gets the documented defaults and its own checks", "[scenario]") {
  auto s = parse_scenario(R"({"schema_version": 1, "name": "t", "cluster": {"nodes": 4},
    "workload": {"kind": "train", "checkpoint": {"every_steps": 50},
                 "recovery": {"mode": "elastic"}}})",
                          "s.json")
               .scenario;
  const auto& w = std::get<TrainWorkload>(s.workload);
  CHECK(w.layers == std::vector<int>{256, 1024, 1024, 1024, 16});
  CHECK(w.batch_size == 1024);
  CHECK(w.steps == 400);
  CHECK(w.optimizer == "sgd");
  CHECK(w.algorithm == "tcp_ring");
  CHECK(w.bucket_size.bytes == 1u << 20);
  CHECK(w.checkpoint.every_steps == 50);
  CHECK(w.checkpoint.incremental);
  CHECK(w.checkpoint.full_every == 4);
  CHECK(w.recovery.mode == RecoveryMode::kElastic);
  CHECK(w.recovery.max_restarts == 3);
  CHECK(workload_kind(s.workload) == "train");
  CHECK(workload_recovery(s.workload).mode == RecoveryMode::kElastic);

  CHECK_THAT(first_error(R"({"schema_version": 1, "name": "t", "cluster": {"nodes": 4},
    "workload": {"kind": "train", "batch_size": 2}})"),
             Catch::Contains("workload.batch_size: batch_size 2 is smaller than the 4 ranks"));
  CHECK_THAT(first_error(R"({"schema_version": 1, "name": "t", "cluster": {"nodes": 2},
    "workload": {"kind": "command", "argv": ["x"], "recovery": {"mode": "elastic"}}})"),
             Catch::Contains("workload.recovery.mode") && Catch::Contains("\"elastic\""));
  CHECK_THAT(first_error(R"({"schema_version": 1, "name": "t", "cluster": {"nodes": 2},
    "workload": {"kind": "train", "checkpoint": {"every_steps": 10}, "recovery": {"mode": "restart", "min_nodes": 3}}})"),
             Catch::Contains("workload.recovery.min_nodes"));
}

TEST_CASE("scenario: restart_after is an envelope key of the types whose registry row takes it", "[scenario]") {
  auto with = [](const std::string& workload, const std::string& f) {
    return R"({"schema_version": 1, "name": "t", "cluster": {"nodes": 4}, "workload": )" + workload + R"(, "faults": [)" +
           f + "]}";
  };
  const std::string collective = R"({"kind": "collective"})";
  auto s = parse_scenario(with(collective, R"({"type": "node.kill", "at": "1s", "restart_after": "2s"})"), "s.json").scenario;
  REQUIRE(s.faults.size() == 1);
  REQUIRE(s.faults[0].restart_after);
  CHECK(s.faults[0].restart_after->seconds() == 2.0);
  CHECK_FALSE(s.faults[0].params.has("restart_after"));
  auto none = parse_scenario(with(collective, R"({"type": "rank.kill", "at": "1s"})"), "s.json").scenario;
  CHECK_FALSE(none.faults[0].restart_after);
  CHECK_THAT(first_error(with(collective, R"({"type": "process.signal", "signal": "USR1", "at": "1s", "restart_after": "2s"})")),
             Catch::Contains("faults[0].restart_after: unknown key"));
  CHECK_THAT(first_error(with(collective, R"({"type": "node.kill", "at": "1s", "restart_after": "soon"})")),
             Catch::Contains("faults[0].restart_after"));
  const std::string serve = R"({"kind": "serve"})";
  CHECK_THAT(first_error(with(serve, R"({"type": "gpu.hang", "target": {"nodes": [0]}, "at": "1s", "restart_after": "2s"})")),
             Catch::Contains("gpu.hang does not end a serve replica"));
  CHECK(first_error(with(serve, R"({"type": "gpu.xid", "target": {"nodes": [0]}, "at": "1s", "restart_after": "2s"})")) ==
        "(valid)");
}

}  // namespace scenario_parser_test
