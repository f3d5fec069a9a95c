// The BLAS kernel the workers get and the CPU peak train/mfu_hw is measured against: the
// candidates a CPU's flags allow, the decision (the fastest correct kernel; wrong ones
// never), the probe subprocess against this machine's real OpenBLAS, the per-host cache,
// and a training run that carries the choice to its ranks and reports train/mfu_hw.
// This machine's own OpenBLAS picks a good kernel by itself, so the case the probe exists
// for (a library that falls back to Prescott) is exercised through decide_blas with
// measured-looking numbers; every other test runs the real library.
#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "bench/blas/blas_probe.h"
#include "bench/blas/cpu_peak.h"
#include "harness/doctor/blas_choice.h"
#include "results_json.h"
#include "test_util.h"

namespace blas_choice_test {  // this file's names, apart in a unity batch (tests/CMakeLists.txt)

using namespace chaosbench;
using namespace chaosbench::harness;
using namespace chaosbench::test;
using namespace std::chrono_literals;
using nlohmann::json;

namespace {

reports::BlasCandidateRecord candidate(const std::string& name, const std::string& corename, double gflops,
                                       const std::string& problem = "") {
  return {name, corename, gflops, problem.empty() ? 2e-7 : 0.5, problem.empty(), problem};
}

}  // namespace

TEST_CASE("blas: the candidates follow the CPU's flags and vendor", "[blas]") {
  const std::set<std::string> spr = {"sse2", "pni", "sse4_2", "avx", "avx2", "fma", "avx512f", "avx512cd", "avx512bw",
                                     "avx512dq", "avx512vl", "avx512_bf16", "amx_tile", "avx512_fp16"};
  CHECK(blas_candidates(spr, "GenuineIntel") ==
        std::vector<std::string>{"SapphireRapids", "Cooperlake", "SkylakeX", "Haswell", "Sandybridge"});
  const std::set<std::string> zen2 = {"sse2", "pni", "sse4_2", "avx", "avx2", "fma"};
  CHECK(blas_candidates(zen2, "AuthenticAMD") == std::vector<std::string>{"Zen", "Haswell", "Sandybridge"});
  CHECK(blas_candidates(zen2, "GenuineIntel") == std::vector<std::string>{"Haswell", "Sandybridge"});
  CHECK(blas_candidates({"sse2", "pni", "sse4_2"}, "GenuineIntel") == std::vector<std::string>{"Nehalem"});
  CHECK(blas_candidates({"sse2", "pni"}, "GenuineIntel") == std::vector<std::string>{"Prescott"});
  CHECK(blas_candidates({"fp", "asimd"}, "") .empty());  // not x86-64
}

// The case of the issue: a VM whose generic CPU name makes OpenBLAS fall back to SSE3.
TEST_CASE("blas: the fastest correct kernel wins, wrong results never, the user's choice is kept", "[blas]") {
  BlasChoice b;
  b.source = "probe";
  b.candidates = {candidate("", "Prescott", 19.8), candidate("Cooperlake", "Cooperlake", 140.0, "wrong results"),
                  candidate("SkylakeX", "SkylakeX", 101.2), candidate("Haswell", "Haswell", 70.1),
                  candidate("SapphireRapids", "Cooperlake", 139.0, "not in this build")};
  BlasChoiceOptions options;
  auto slow = b;
  decide_blas(slow, options);
  CHECK(slow.detected == "Prescott");
  CHECK(slow.detected_gflops == Approx(19.8));
  CHECK(slow.chosen == "SkylakeX");
  CHECK(slow.best == "SkylakeX");
  CHECK(slow.chosen_gflops == Approx(101.2));
  CHECK(slow.source == "probe");
  CHECK_THAT(slow.reason, Catch::Contains("Prescott, is 5.1x slower"));

  // Within 3% of the fastest, the library's own choice stays.
  auto close = b;
  close.candidates.front() = candidate("", "SkylakeX", 99.0);
  close.candidates[2] = candidate("Cooperlake2", "Cooperlake2", 101.0);
  decide_blas(close, options);
  CHECK(close.chosen == "SkylakeX");
  CHECK_THAT(close.reason, Catch::Contains("own choice is the fastest"));

  // A library whose own choice computes wrong results: never chosen.
  auto wrong = b;
  wrong.candidates.front() = candidate("", "SkylakeX", 300.0, "wrong results (error 0.5)");
  decide_blas(wrong, options);
  CHECK(wrong.chosen == "SkylakeX");  // the candidate run, which was right
  CHECK(wrong.chosen_gflops == Approx(101.2));
  CHECK_THAT(wrong.reason, Catch::Contains("unusable"));

  auto user = b;
  options.user_coretype = "haswell";
  decide_blas(user, options);
  CHECK(user.chosen == "haswell");
  CHECK(user.source == "environment");
  CHECK(user.chosen_gflops == Approx(70.1));
  CHECK_THAT(user.reason, Catch::Contains("SkylakeX at 101.2"));

  BlasChoice none;
  none.candidates = {candidate("", "", 0, "the probe crashed")};
  decide_blas(none, {});
  CHECK(none.chosen.empty());
  CHECK(none.source == "unavailable");
}

TEST_CASE("blas: worker blas-probe measures the kernel OPENBLAS_CORETYPE names, and checks its results", "[blas]") {
  auto r = run_command({"/usr/bin/env", "OPENBLAS_CORETYPE=Prescott", binary(), "worker", "blas-probe", "--size", "256",
                        "--seconds", "0", "--cpu-peak"},
                       60s);
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  const auto j = json::parse(r.out);
  CHECK(j["corename"] == "Prescott");
  CHECK(j["correct"] == true);
  CHECK(j["max_error"].get<double>() < bench::blas::kMaxError);
  CHECK(j["gflops"].get<double>() > 0.5);
  CHECK_THAT(j["config"].get<std::string>(), Catch::StartsWith("OpenBLAS"));
  CHECK(j["cpu"]["peak_gflops"].get<double>() > 0);
  CHECK(run_command({binary(), "worker", "blas-probe", "--size", "7"}, 30s).exit_code == 2);
}

TEST_CASE("blas: the CPU peak is measured, and no kernel runs faster than it", "[blas]") {
  const auto peak = bench::blas::measure_cpu_peak();
  REQUIRE(peak.known);
  CHECK((peak.lanes == 4 || peak.lanes == 8 || peak.lanes == 16));
  CHECK(peak.clock_ghz > 0.5);
  CHECK(peak.clock_ghz < 8.0);
  if (peak.lanes >= 8) CHECK((peak.fma_units == 1 || peak.fma_units == 2));
  CHECK(peak.peak_gflops == Approx(peak.lanes * 2.0 * std::max(peak.fma_units, 1) * peak.clock_ghz));
  // Measured against the same machine: margins for a clock that moves between the two.
  CHECK(peak.fma_gflops < 1.25 * peak.peak_gflops);
  const auto blas = bench::blas::measure_blas(512, 0.1);
  CHECK(blas.correct);
  CHECK(blas.gflops < 1.25 * peak.peak_gflops);
  CHECK_THAT(peak.formula(), Catch::Contains("GFLOP/s"));
}

TEST_CASE("blas: the probe runs once per host, then the cache answers, a bad cache is probed again", "[blas]") {
  TempDir dir;
  BlasChoiceOptions options;
  options.self_exe = binary();
  options.cache_dir = dir.file("cache");
  const auto first = choose_blas(options);
  CHECK(first.source == "probe");
  REQUIRE_FALSE(first.chosen.empty());
  REQUIRE(first.best_gflops > 0);
  // The acceptance: the workers' kernel is within 10% of the best correct one.
  CHECK(first.chosen_gflops >= 0.9 * first.best_gflops);
  CHECK(first.cpu.known);
  const std::string cache = dir.file("cache/blas-probe.json");
  REQUIRE(std::filesystem::exists(cache));

  const auto second = choose_blas(options);
  CHECK(second.source == "cache");
  CHECK(second.chosen == first.chosen);
  CHECK(second.candidates.size() == first.candidates.size());
  CHECK(second.cpu.peak_gflops == Approx(first.cpu.peak_gflops));

  std::ofstream(cache) << "{\"format\": 1, \"fingerprint\": \"another host\", \"blas\": {}}";
  CHECK(choose_blas(options).source == "probe");
  std::ofstream(cache) << "not json at all";
  CHECK(choose_blas(options).source == "probe");
  options.use_cache = false;
  CHECK(choose_blas(options).source == "probe");

  // A directory others may write is neither read nor written: the cache picks the
  // kernel every worker runs.
  options.use_cache = true;
  options.cache_dir = dir.file("shared");
  std::filesystem::create_directories(options.cache_dir);
  std::filesystem::permissions(options.cache_dir, std::filesystem::perms::all);
  CHECK(choose_blas(options).source == "probe");
  CHECK_FALSE(std::filesystem::exists(dir.file("shared/blas-probe.json")));
}

TEST_CASE("blas: a training run gives its ranks the chosen kernel and reports train/mfu_hw", "[blas][train]") {
  TempDir dir;
  dir.write("s.json", train_scenario(2, ", \"steps\": 40", "[]", "local", "10s"));
  auto r = run_command({"/usr/bin/env", "-u", "OPENBLAS_CORETYPE", "CHAOSBENCH_CACHE_DIR=" + dir.file("cache"), binary(),
                        "run", dir.file("s.json"), "--out", dir.file("out"), "--quiet"},
                       120s);
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  auto res = read_results(dir);
  const auto& blas = res["environment"]["blas"];
  CHECK(blas["source"] == "probe");
  const std::string chosen = blas["chosen"];
  REQUIRE_FALSE(chosen.empty());
  CHECK(blas["chosen_gflops"].get<double>() >= 0.9 * blas["best_gflops"].get<double>());
  CHECK_THAT(read_file(dir.file("out/logs/rank0.err")), Catch::Contains(" " + chosen + " MAX_THREADS"));
  const auto mfu = overall_value(res, "train/mfu");
  const auto mfu_hw = overall_value(res, "train/mfu_hw");
  REQUIRE(mfu);
  REQUIRE(mfu_hw);
  CHECK(*mfu_hw > 0);
  CHECK(*mfu_hw < 1.25 * *mfu);  // the hardware's peak is above what the library reaches
  REQUIRE(overall_value(res, "compute/peak_tflops"));
  CHECK(*overall_value(res, "compute/peak_tflops") == Approx(blas["cpu"]["peak_gflops"].get<double>() / 1e3).epsilon(0.01));

  // The user's own OPENBLAS_CORETYPE is kept, and said so.
  auto user = run_command({"/usr/bin/env", "OPENBLAS_CORETYPE=Prescott", "CHAOSBENCH_CACHE_DIR=" + dir.file("cache"),
                           binary(), "run", dir.file("s.json"), "--out", dir.file("out2"), "--quiet"},
                          120s);
  INFO(user.err);
  REQUIRE(user.exit_code == 0);
  auto res2 = read_results(dir, "out2");
  CHECK(res2["environment"]["blas"]["source"] == "environment");
  CHECK(res2["environment"]["blas"]["chosen"] == "Prescott");
  CHECK_THAT(read_file(dir.file("out2/logs/rank0.err")), Catch::Contains(" Prescott MAX_THREADS"));
}

}  // namespace blas_choice_test
