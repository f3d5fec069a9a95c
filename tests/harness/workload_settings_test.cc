// Each workload's settings are defined once (bench/*/*_settings.h): what a scenario gets
// when it leaves a key out must be what `chaosbench worker X` uses when the flag is left
// out, and what the launcher encodes must decode back to the same value.
#include <catch2/catch.hpp>

#include <stdexcept>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "bench/collective/collective_settings.h"
#include "bench/load/load_settings.h"
#include "bench/serve/serve_settings.h"
#include "bench/train/train_settings.h"
#include "harness/scenario/scenario_loader.h"

namespace workload_settings_test {  // this file's names, apart in a unity batch (tests/CMakeLists.txt)

using namespace chaosbench;
using namespace std::chrono_literals;

namespace {

harness::WorkloadSpec minimal_workload(const std::string& kind, int nodes) {
  const auto text = fmt::format(R"({{"schema_version": 1, "name": "t", "cluster": {{"nodes": {}}},
                                     "workload": {{"kind": "{}"}}}})",
                                nodes, kind);
  return harness::parse_scenario(text, "s.json").scenario.workload;
}

std::string flags_text(const std::vector<std::string>& flags) { return fmt::format("{}", fmt::join(flags, " ")); }

}  // namespace

TEST_CASE("workload settings: the collective worker's defaults are the scenario's", "[settings]") {
  const auto scenario = std::get<harness::CollectiveWorkload>(minimal_workload("collective", 2));
  const auto worker = bench::decode_collective_settings({});
  INFO("scenario: " << flags_text(bench::encode_collective_settings(scenario)));
  INFO("worker:   " << flags_text(bench::encode_collective_settings(worker)));
  CHECK(worker == scenario);
  CHECK(worker == bench::CollectiveSettings{});
}

TEST_CASE("workload settings: the train worker's defaults are the scenario's", "[settings]") {
  const auto scenario = std::get<harness::TrainWorkload>(minimal_workload("train", 2));
  const auto worker = bench::train::decode_train_settings({});
  INFO("scenario: " << flags_text(bench::train::encode_train_settings(scenario)));
  INFO("worker:   " << flags_text(bench::train::encode_train_settings(worker)));
  CHECK(worker == scenario);
  CHECK(worker == bench::train::TrainSettings{});
  // Unset in both: the launcher decides from the scenario's faults, a rank started by
  // hand checks every step.
  CHECK_FALSE(worker.sdc_check_every);
}

TEST_CASE("workload settings: the serve and load workers' defaults are the scenario's", "[settings]") {
  const auto scenario = std::get<harness::ServeWorkload>(minimal_workload("serve", 2));
  const auto serve = bench::serve::decode_serve_settings({});
  INFO("scenario serve: " << flags_text(bench::serve::encode_serve_settings(scenario)));
  INFO("worker serve:   " << flags_text(bench::serve::encode_serve_settings(serve)));
  CHECK(serve == static_cast<const bench::serve::ServeSettings&>(scenario));
  CHECK(serve == bench::serve::ServeSettings{});

  const auto load = bench::load::decode_load_settings({});
  INFO("scenario load: " << flags_text(bench::load::encode_load_settings(scenario.load)));
  INFO("worker load:   " << flags_text(bench::load::encode_load_settings(load)));
  // The one deliberate difference: a scenario's load lasts 20s, the worker alone 10s.
  CHECK(scenario.load.duration.value == 20s);
  CHECK(load.duration.value == 10s);
  bench::load::LoadSettings scenario_load = scenario.load;
  scenario_load.duration = load.duration;
  CHECK(load == scenario_load);
  CHECK(scenario.load.node == -1);
}

TEST_CASE("workload settings: collective settings survive the worker command line", "[settings]") {
  bench::CollectiveSettings s;
  s.collectives = {"allgather", "broadcast"};
  s.algorithms = {"halving_doubling"};
  s.min_size = common::Size{4096};
  s.max_size = common::Size{1u << 22};
  s.factor = 4;
  s.warmup_iters = 1;
  s.iters = 9;
  s.duration = common::Duration{1500ms};
  s.check = false;
  s.timeout = common::Duration{2500ms};
  const auto flags = bench::encode_collective_settings(s);
  INFO(flags_text(flags));
  CHECK(bench::decode_collective_settings(flags) == s);
}

TEST_CASE("workload settings: train settings survive the worker command line", "[settings]") {
  bench::train::TrainSettings s;
  s.backend = "nccl";
  s.device = "cuda";
  s.layers = {8, 32, 4};
  s.batch_size = 96;
  s.steps = 77;
  s.optimizer = "adamw";
  s.lr = 0.125f;  // floats: the command line carries the trainer's precision
  s.momentum = 0.5f;
  s.weight_decay = 0.25f;
  s.beta1 = 0.75f;
  s.beta2 = 0.9375f;
  s.eps = 1e-6f;
  s.bucket_size = common::Size{65536};
  s.algorithm = "bcube";
  s.threads = 3;
  s.target_loss = 0.5;
  s.checkpoint = {.every_steps = 25, .incremental = false, .full_every = 2, .async = false, .dir = "/tmp/ckpt"};
  s.recovery.mode = bench::train::RecoveryMode::kElastic;  // the worker is told the mode only
  s.timeout = common::Duration{4s};
  s.sdc_check_every = 5;
  const auto flags = bench::train::encode_train_settings(s);
  INFO(flags_text(flags));
  CHECK(bench::train::decode_train_settings(flags) == s);
}

TEST_CASE("workload settings: serve and load settings survive the worker command line", "[settings]") {
  bench::serve::ServeSettings s;
  s.model_name = "mini";
  s.layers = {16, 8, 2};
  s.dtype = "int8";
  s.port = 9001;
  s.batching = {.max_batch_size = 32, .max_queue_delay = common::Duration{750us}, .preferred_batch_sizes = {8, 16}};
  s.queue_limit = 99;
  s.checkpoint_dir = "/tmp/ckpt";
  const auto serve_flags = bench::serve::encode_serve_settings(s);
  INFO(flags_text(serve_flags));
  CHECK(bench::serve::decode_serve_settings(serve_flags) == s);

  bench::load::LoadSettings l;
  l.scenario = bench::load::LoadScenario::kSingleStream;
  l.qps = 12.5;
  l.duration = common::Duration{3500ms};
  l.rows = 4;
  l.connections = 7;
  l.timeout = common::Duration{250ms};
  const auto load_flags = bench::load::encode_load_settings(l);
  INFO(flags_text(load_flags));
  CHECK(bench::load::decode_load_settings(load_flags) == l);
}

TEST_CASE("workload settings: a bad flag value is refused naming the flag", "[settings]") {
  auto message = [](auto decode, std::vector<std::string> flags) {
    try {
      decode(flags);
    } catch (const std::invalid_argument& e) {
      return std::string(e.what());
    }
    return std::string("(accepted)");
  };
  CHECK(message(bench::train::decode_train_settings, {"--algorithm", "tree"}) ==
        "--algorithm: expected bcube, ring or tcp_ring, got \"tree\"");
  CHECK(message(bench::train::decode_train_settings, {"--recovery", "later"}) ==
        "--recovery: expected none, restart or elastic, got \"later\"");
  CHECK(message(bench::train::decode_train_settings, {"--layers", "4,x"}) ==
        "--layers: expected comma-separated integers, got \"4,x\"");
  CHECK_THAT(message(bench::decode_collective_settings, {"--min-size", "lots"}), Catch::StartsWith("--min-size: "));
  CHECK(message(bench::load::decode_load_settings, {"--scenario", "burst"}) ==
        "--scenario: expected server, offline or single-stream, got \"burst\"");
  CHECK_THAT(message(bench::serve::decode_serve_settings, {"--port", "x"}), Catch::Contains("--port"));
}

}  // namespace workload_settings_test
