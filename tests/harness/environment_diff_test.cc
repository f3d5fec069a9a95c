// The environment fingerprint (reports/gate/environment_diff.h, harness/derive/host_fingerprint.h):
// what makes two runs incomparable, and `compare` refusing (exit 2, naming what differs)
// unless --allow-env-diff.
#include <catch2/catch.hpp>

#include <fstream>

#include <nlohmann/json.hpp>

#include "harness/derive/result_builder.h"
#include "reports/gate/environment_diff.h"
#include "tests/support/test_util.h"

namespace environment_diff_test {  // this file's names, apart in a unity batch (tests/CMakeLists.txt)

using namespace chaosbench;
using namespace std::chrono_literals;
using reports::Environment;

namespace {

Environment machine(std::string testbed) {
  Environment e;
  e.testbed = std::move(testbed);
  e.cpu_model = "Intel(R) Xeon(R) Platinum 8488C";
  e.cpus = 2;
  e.cpu_flags = {"avx2", "avx512f", "fma"};
  e.memory_bytes = 24ull << 30;
  return e;
}

}  // namespace

TEST_CASE("environment: the testbed label and the hardware decide, not the host name or the build", "[env-diff]") {
  auto a = machine("ci-small"), b = machine("ci-small");
  b.host = "another";
  b.kernel = "Linux 7";
  b.git_commit = "abc";
  b.memory_bytes = (24ull << 30) - (100ull << 20);  // within 5 %
  CHECK(reports::environment_differences(a, b).empty());
  b.testbed = "laptop";
  b.cpus = 16;
  b.gpus = {"NVIDIA H200 (driver 570.86)"};
  const auto diffs = reports::environment_differences(a, b);
  REQUIRE(diffs.size() == 3);
  CHECK(diffs[0] == "testbed: ci-small (baseline) vs laptop (current)");
  CHECK(diffs[1] == "CPUs: 2 (baseline) vs 16 (current)");
  CHECK(diffs[2] == "GPUs: (none) (baseline) vs NVIDIA H200 (driver 570.86) (current)");
  // A results.json from before the fingerprint: only the label (none on either side) counts.
  CHECK(reports::environment_differences(Environment{}, machine("")).empty());
}

TEST_CASE("environment: this host's fingerprint is filled in", "[env-diff]") {
  const auto env = harness::describe_environment();
  CHECK_FALSE(env.cpu_model.empty());
  CHECK(env.memory_bytes > 0);
  CHECK_FALSE(env.compiler.empty());
}

TEST_CASE("compare: runs from different testbeds are refused unless --allow-env-diff", "[env-diff]") {
  test::TempDir dir;
  auto results = nlohmann::json::parse(std::ifstream(std::string(CHAOSBENCH_SOURCE_DIR) + "/tests/golden/results.json"));
  results["environment"]["testbed"] = "ci-small";
  dir.write("a.json", results.dump());
  results["environment"]["testbed"] = "laptop";
  dir.write("b.json", results.dump());
  auto refused = test::run_command({test::binary(), "compare", dir.file("a.json"), dir.file("b.json")}, 30s);
  CHECK(refused.exit_code == 2);
  CHECK_THAT(refused.err, Catch::Contains("testbed: ci-small (baseline) vs laptop (current)") &&
                              Catch::Contains("--allow-env-diff"));
  auto allowed = test::run_command(
      {test::binary(), "compare", dir.file("a.json"), dir.file("b.json"), "--allow-env-diff"}, 30s);
  CHECK(allowed.exit_code == 0);
  CHECK_THAT(allowed.err, Catch::Contains("warning"));
}

}  // namespace environment_diff_test
