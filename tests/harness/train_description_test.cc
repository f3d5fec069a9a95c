// What results.json says a train run used (environment.backends["train"]): the device and
// the gradient reducer the scenario chose, for as many ranks as trained together; a CUDA
// scenario is read and planned on a host without a GPU.
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "harness/derive/train_events.h"
#include "harness/workloads/train_description.h"
#include "harness/plan/workload_launcher.h"
#include "harness/scenario/scenario_loader.h"
#include "test_util.h"

namespace train_description_test {  // this file's names, apart in a unity batch (tests/CMakeLists.txt)

using namespace chaosbench;
using bench::train::TrainSettings;
using harness::describe_train_run;

namespace {

TrainSettings settings(const std::string& device, const std::string& backend, const std::string& algorithm) {
  TrainSettings s;
  s.device = device;
  s.backend = backend;
  s.algorithm = algorithm;
  return s;
}

harness::StoredEvent train_start(int rank, std::int64_t world) {
  harness::StoredEvent e;
  e.event = {rank, 1000.5, "train_start", {{"step", std::int64_t{0}}, {"world", world}}};
  e.received_at = 1000.5;
  return e;
}

}  // namespace

TEST_CASE("train description: device and reducer as the settings chose them", "[train-description]") {
  CHECK(describe_train_run(TrainSettings{}, 4) == "cpu device (OpenBLAS), tcp_ring allreduce (the trainer's own TCP ring)");
  CHECK(describe_train_run(settings("cpu", "gloo", "tcp_ring"), 2) ==
        "cpu device (OpenBLAS), tcp_ring allreduce (the trainer's own TCP ring)");
  CHECK(describe_train_run(settings("cpu", "gloo", "ring"), 4) == "cpu device (OpenBLAS), gloo/tcp ring allreduce");
  CHECK(describe_train_run(settings("cpu", "gloo", "bcube"), 4) == "cpu device (OpenBLAS), gloo/tcp bcube allreduce");
  // NCCL whatever the algorithm says: the algorithm chooses among the host reducers only.
  CHECK(describe_train_run(settings("cuda", "nccl", "tcp_ring"), 2) == "cuda device (cuBLAS), NCCL allreduce");
  CHECK(describe_train_run(settings("cuda", "gloo", "tcp_ring"), 1) ==
        "cuda device (cuBLAS), one replica: no gradient allreduce");
  CHECK(describe_train_run(settings("cpu", "gloo", "ring"), 1) ==
        "cpu device (OpenBLAS), one replica: no gradient allreduce");

  TrainSettings hybrid = settings("cpu", "gloo", "ring");
  hybrid.parallel.tp = 2;
  hybrid.parallel.pp = 2;
  CHECK(describe_train_run(hybrid, 8) == "cpu device (OpenBLAS), tp 2 x pp 2 x dp 2 (activations and TP sums on "
                                         "point-to-point TCP links), gloo/tcp ring allreduce");
  hybrid.parallel.dp = 1;
  CHECK(describe_train_run(hybrid, 4) == "cpu device (OpenBLAS), tp 2 x pp 2 x dp 1 (activations and TP sums on "
                                         "point-to-point TCP links), one replica: no gradient allreduce");
}

TEST_CASE("train description: the world is the most ranks that started together", "[train-description]") {
  CHECK(harness::trained_world({}, 1000, 4) == 4);  // none started: the plan's
  CHECK(harness::trained_world({train_start(0, 4), train_start(1, 3), train_start(2, 4)}, 1000, 8) == 4);
  CHECK(harness::trained_world({train_start(0, 1)}, 1000, 1) == 1);
}

TEST_CASE("train description: a CUDA scenario is read and planned without a GPU", "[train-description]") {
  const auto parsed = harness::parse_scenario(
      R"({"schema_version": 1, "name": "t", "cluster": {"nodes": 2},
          "workload": {"kind": "train", "device": "cuda", "backend": "nccl", "steps": 10}})",
      "s.json");
  const auto& train = std::get<harness::TrainWorkload>(parsed.scenario.workload);
  CHECK(describe_train_run(train, parsed.scenario.cluster.world_size()) == "cuda device (cuBLAS), NCCL allreduce");

  harness::LaunchContext ctx;
  ctx.self_exe = "/bin/chaosbench";
  ctx.node_addrs = {"127.0.0.1", "127.0.0.1"};
  const auto plan = harness::plan_workload(parsed.scenario, ctx);
  REQUIRE(plan.size() == 2);
  for (const auto& rank : plan) {
    const std::string argv = fmt::format("{}", fmt::join(rank.spec.argv, " "));
    CHECK_THAT(argv, Catch::StartsWith("/bin/chaosbench worker train"));
    CHECK_THAT(argv, Catch::Contains("--device cuda --backend nccl"));
  }

  // The GPU scenario the GPU check runs: one rank, so nothing to reduce.
  const auto gpu = harness::load_scenario(test::source("scenarios/gpu-train.json"));
  CHECK(describe_train_run(std::get<harness::TrainWorkload>(gpu.scenario.workload), gpu.scenario.cluster.world_size()) ==
        "cuda device (cuBLAS), one replica: no gradient allreduce");
}

}  // namespace train_description_test
