// The llm workload's scenario keys: defaults shared with `chaosbench worker llm-serve`
// and `worker llm-load`, settings that survive the worker command lines, the errors a
// bad block gets, and the processes the launcher plans for it.
#include <catch2/catch.hpp>

#include <algorithm>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "bench/llm/load/llm_load_settings.h"
#include "bench/llm/llm_serve_settings.h"
#include "harness/plan/workload_launcher.h"
#include "harness/scenario/diagnostic.h"
#include "harness/scenario/scenario_loader.h"

namespace llm_workload_test {  // this file's names, apart in a unity batch (tests/CMakeLists.txt)

using namespace chaosbench;
using namespace std::chrono_literals;

namespace {

std::string scenario_text(const std::string& workload, int nodes = 3) {
  return fmt::format(R"({{"schema_version": 1, "name": "t", "cluster": {{"nodes": {}}}, "workload": {}}})", nodes,
                     workload);
}

harness::LlmWorkload llm_of(const std::string& workload, int nodes = 3) {
  return std::get<harness::LlmWorkload>(harness::parse_scenario(scenario_text(workload, nodes), "s.json").scenario.workload);
}

std::string first_error(const std::string& workload, int nodes = 3) {
  try {
    harness::parse_scenario(scenario_text(workload, nodes), "s.json");
  } catch (const harness::ScenarioError& e) {
    return harness::format_diagnostic(e.diagnostics().front());
  }
  return "(valid)";
}

std::string flags_text(const std::vector<std::string>& flags) { return fmt::format("{}", fmt::join(flags, " ")); }

}  // namespace

TEST_CASE("llm workload: the llm-serve and llm-load workers' defaults are the scenario's", "[llm-workload]") {
  const auto w = llm_of(R"({"kind": "llm"})");
  const auto serve = bench::llm::decode_llm_serve_settings({});
  INFO("scenario serve: " << flags_text(bench::llm::encode_llm_serve_settings(w)));
  INFO("worker serve:   " << flags_text(bench::llm::encode_llm_serve_settings(serve)));
  CHECK(serve == static_cast<const bench::llm::LlmServeSettings&>(w));
  CHECK(serve == bench::llm::LlmServeSettings{});

  const auto load = bench::llm::decode_llm_load_settings({});
  // As for serve: a scenario's load lasts 20s, the worker alone 10s.
  CHECK(w.load.duration.value == 20s);
  CHECK(load.duration.value == 10s);
  bench::llm::LlmLoadSettings scenario_load = w.load;
  scenario_load.duration = load.duration;
  CHECK(load == scenario_load);
  CHECK(w.load.node == -1);
  CHECK_FALSE(w.load.find_peak);
}

TEST_CASE("llm workload: every key reaches the settings and survives the worker command lines", "[llm-workload]") {
  const auto w = llm_of(R"({"kind": "llm", "model_name": "tiny-1", "engine": "synthetic",
    "model": {"layers": 2, "dim": 64, "heads": 4, "kv_heads": 1, "ffn": 96, "dtype": "int8"},
    "scheduler": {"max_running": 7, "max_batched_tokens": 99, "kv_blocks": 300, "block_size": 8, "max_waiting": 5},
    "synthetic": {"first_token": "75ms", "cadence": "5ms", "tokens": 12}, "context": 512, "engine_threads": 3, "replicas": [0, 1],
    "port": 9001,
    "load": {"node": 2, "api": "chat", "stream": false, "arrival": "constant", "rate": 2.5, "concurrency": 3,
             "duration": "7s", "input": {"distribution": "uniform", "low": 8, "high": 64},
             "output": {"distribution": "lognormal", "mean": 50, "stddev": 20, "max": 300}, "ignore_eos": false,
             "slo": {"ttft": "400ms", "tpot": "1500us", "e2e": "9s"}, "timeout": "30s", "window": "500ms",
             "max_in_flight": 77,
             "find_peak": {"start_rate": 3, "target_attainment": 95, "precision": 0.2, "trial": "4s", "max_trials": 9}}})");
  CHECK(w.model_name == "tiny-1");
  CHECK(w.engine_threads == 3);
  CHECK(w.model.kv_heads == 1);
  CHECK(w.scheduler.block_size == 8);
  CHECK(w.synthetic.cadence.value == 5ms);
  CHECK(w.load.api == bench::llm::OpenAiEndpoint::kChatCompletions);
  CHECK(w.load.input.kind == bench::llm::LengthDistribution::kUniform);
  CHECK(w.load.output.max == 300);
  CHECK(w.load.slo.tpot->value == 1500us);
  REQUIRE(w.load.find_peak);
  CHECK(w.load.find_peak->max_trials == 9);

  const auto serve_flags = bench::llm::encode_llm_serve_settings(w);
  INFO(flags_text(serve_flags));
  CHECK(bench::llm::decode_llm_serve_settings(serve_flags) == static_cast<const bench::llm::LlmServeSettings&>(w));
  const auto load_flags = bench::llm::encode_llm_load_settings(w.load);
  INFO(flags_text(load_flags));
  CHECK(bench::llm::decode_llm_load_settings(load_flags) == static_cast<const bench::llm::LlmLoadSettings&>(w.load));
}

TEST_CASE("llm workload: a bad block names the path and what was expected", "[llm-workload]") {
  CHECK_THAT(first_error(R"({"kind": "llm", "model": {"dim": 100, "heads": 8}})"),
             Catch::Contains("workload") && Catch::Contains("multiple of model.heads"));
  CHECK_THAT(first_error(R"({"kind": "llm", "endpoints": ["https://x:1"]})"),
             Catch::Contains("workload.endpoints[0]") && Catch::Contains("http://10.0.0.5:8000"));
  CHECK_THAT(first_error(R"({"kind": "llm", "endpoints": ["http://x:1"], "replicas": [0]})"),
             Catch::Contains("not both"));
  CHECK_THAT(first_error(R"({"kind": "llm", "replicas": [2]})"), Catch::Contains("runs the load generator"));
  CHECK_THAT(first_error(R"({"kind": "llm"})", 1), Catch::Contains("at least 2 nodes"));
  CHECK(first_error(R"({"kind": "llm", "endpoints": ["http://127.0.0.1:8000/"]})", 1) == "(valid)");
  CHECK_THAT(first_error(R"({"kind": "llm", "load": {"input": {"distribution": "uniform", "low": 9, "high": 3}}})"),
             Catch::Contains("workload.load.input"));
  CHECK_THAT(first_error(R"({"kind": "llm", "load": {"slo": {"ttft": "10us"}}})"),
             Catch::Contains("workload.load.slo.ttft") && Catch::Contains("at least 1ms"));
  CHECK_THAT(first_error(R"({"kind": "llm", "load": {"arival": "poisson"}})"), Catch::Contains("arrival"));
  CHECK_THAT(first_error(R"({"kind": "llm", "scheduler": {"kv_blocks": 4, "block_size": 16}})"),
             Catch::Contains("must hold one whole context"));
  CHECK_THAT(first_error(R"({"kind": "llm", "load": {"find_peak": {"precision": 1.5}}})"),
             Catch::Contains("workload.load.find_peak.precision"));
}

TEST_CASE("llm workload: settings the workers could not honour are refused at the key", "[llm-workload]") {
  // The worker flags carry whole milliseconds (whole microseconds for tpot and the
  // synthetic timing): 1.5ms would silently become 1 ms.
  CHECK_THAT(first_error(R"({"kind": "llm", "load": {"slo": {"ttft": "1.5ms"}}})"),
             Catch::Contains("workload.load.slo.ttft") && Catch::Contains("whole milliseconds"));
  CHECK(first_error(R"({"kind": "llm", "load": {"slo": {"ttft": "1.5s", "tpot": "1.5ms"}}})") == "(valid)");
  CHECK_THAT(first_error(R"({"kind": "llm", "load": {"slo": {"tpot": "1500ns"}}})"),
             Catch::Contains("whole microseconds"));
  CHECK_THAT(first_error(R"({"kind": "llm", "synthetic": {"cadence": "500ns"}})"),
             Catch::Contains("workload.synthetic.cadence") && Catch::Contains("at least 1us"));
  // Every request must fit the context, else every one would get 400.
  CHECK_THAT(first_error(R"({"kind": "llm", "load": {"input": 2000}})"),
             Catch::Contains("workload.load") && Catch::Contains("workload.context is 1024"));
  CHECK_THAT(first_error(R"({"kind": "llm", "load": {"input": {"distribution": "normal", "mean": 100, "stddev": 9}}})"),
             Catch::Contains("a distribution's \"max\""));
  CHECK(first_error(R"({"kind": "llm", "endpoints": ["http://x:1"], "load": {"input": 2000}})", 1) == "(valid)");
  CHECK_THAT(first_error(R"({"kind": "llm", "port": 65535})"), Catch::Contains("past 65535"));
  CHECK_THAT(first_error(R"({"kind": "llm", "scheduler": {"max_running": 64, "max_batched_tokens": 32}})"),
             Catch::Contains("at least scheduler.max_running"));
  CHECK_THAT(first_error(R"({"kind": "llm", "model": {"layers": 64, "dim": 8192, "heads": 64, "kv_heads": 64}})"),
             Catch::Contains("GiB"));
}

TEST_CASE("llm workload: the launcher starts llm-serve on replicas and llm-load with their URLs", "[llm-workload]") {
  const auto parsed = harness::parse_scenario(
      scenario_text(R"({"kind": "llm", "port": 8100, "load": {"dataset": "prompts.jsonl"}})"), "s.json");
  harness::LaunchContext ctx;
  ctx.self_exe = "/bin/chaosbench";
  ctx.scenario_dir = "/scenarios";
  ctx.seed = 7;
  ctx.node_addrs = {"10.0.0.1", "10.0.0.2", "10.0.0.3"};
  const auto plan = harness::plan_workload(parsed.scenario, ctx);
  REQUIRE(plan.size() == 3);
  auto argv_of = [&](std::size_t i) { return flags_text(plan[i].spec.argv); };
  CHECK(plan[0].service);
  CHECK_THAT(argv_of(0), Catch::StartsWith("/bin/chaosbench worker llm-serve --model chaosbench-tiny"));
  CHECK_THAT(argv_of(0), Catch::Contains("--port 8100") && Catch::Contains("--host 10.0.0.1 --seed 7"));
  CHECK_FALSE(plan[2].service);
  CHECK(plan[2].node == 2);
  CHECK_THAT(argv_of(2), Catch::StartsWith("/bin/chaosbench worker llm-load"));
  CHECK_THAT(argv_of(2), Catch::Contains("--endpoints http://10.0.0.1:8100,http://10.0.0.2:8100"));
  CHECK_THAT(argv_of(2), Catch::Contains("--dataset /scenarios/prompts.jsonl"));

  // Local processes share one address: each replica gets a port of its own.
  ctx.node_addrs = {"127.0.0.1", "127.0.0.1", "127.0.0.1"};
  const auto local = harness::plan_workload(parsed.scenario, ctx);
  CHECK_THAT(flags_text(local[2].spec.argv), Catch::Contains("http://127.0.0.1:8100,http://127.0.0.1:8101"));

  // Outside endpoints: the load generator alone.
  const auto outside = harness::parse_scenario(
      scenario_text(R"({"kind": "llm", "endpoints": ["http://192.0.2.9:8000"]})", 1), "s.json");
  ctx.node_addrs = {"10.0.0.1"};
  const auto only_load = harness::plan_workload(outside.scenario, ctx);
  REQUIRE(only_load.size() == 1);
  CHECK_THAT(flags_text(only_load[0].spec.argv), Catch::Contains("--endpoints http://192.0.2.9:8000"));
}

}  // namespace llm_workload_test
