// train/* and resilience/* from hand-made trainer event lists: a clean run, a restart
// after a kill, an elastic kill, a fault that only slows training, and runs with too
// little to derive from. Times are seconds since the workload started (t0 = 1000).
#include <catch2/catch.hpp>

#include "reports/model/text_format.h"
#include "harness/derive/train_derivation.h"

namespace train_derivation_test {  // this file's names, apart in a unity batch (tests/CMakeLists.txt)

using namespace chaosbench;
using namespace chaosbench::harness;

namespace {

constexpr double kT0 = 1000.0;

struct StepShape {
  double step_ms = 100, compute_ms = 60, comm_ms = 20, comm_total_ms = 80;
  std::int64_t samples = 32;
  double flops = 1e9;
  std::int64_t attempt = 0, generation = 0, world = 4;
};

struct RunEvents {
  std::vector<StoredEvent> events;
  std::vector<StoredSample> samples;
  std::vector<reports::Phase> phases;
  std::vector<reports::FaultRecord> faults;
  double end_s = 0;
  std::optional<double> target_loss;

  void event(int rank, double t, const char* name, bench::Labels fields) {
    events.push_back({bench::Event{rank, kT0 + t, name, std::move(fields)}, kT0 + t});
  }
  // Steps first..last, one every `interval` seconds from `t`, on `ranks`; loss 2 - 0.03 * step.
  void steps(std::vector<int> ranks, std::int64_t first, std::int64_t last, double t, double interval,
             const StepShape& shape = {}, std::map<int, double> compute_ms = {}) {
    for (std::int64_t s = first; s <= last; ++s, t += interval) {
      for (int r : ranks) {
        double compute = compute_ms.count(r) ? compute_ms[r] : shape.compute_ms;
        event(r, t, "step",
              {{"step", s}, {"step_ms", shape.step_ms}, {"compute_ms", compute}, {"comm_ms", shape.comm_ms},
               {"comm_total_ms", shape.comm_total_ms}, {"samples", shape.samples}, {"loss", 2.0 - 0.03 * double(s)},
               {"flops", shape.flops}, {"world", shape.world}, {"generation", shape.generation},
               {"attempt", shape.attempt}});
      }
    }
  }
  void start(std::vector<int> ranks, double t, std::int64_t step, std::int64_t world, std::int64_t generation,
             std::int64_t attempt, const char* reason) {
    for (int r : ranks)
      event(r, t, "train_start",
            {{"step", step}, {"world", world}, {"generation", generation}, {"attempt", attempt},
             {"reason", std::string(reason)}});
  }
  void peak(int rank, double tflops) {
    samples.push_back({bench::Sample{rank, kT0 + 0.5, "compute/gemm_tflops", tflops, "TFLOP/s", {}}, kT0 + 0.5});
  }
  void fault(const std::string& name, double applied, std::optional<double> reverted = std::nullopt) {
    reports::FaultRecord f;
    f.name = name;
    f.applied_at_s = applied;
    f.reverted_at_s = reverted;
    faults.push_back(f);
  }

  std::vector<reports::MetricRecord> derive() const {
    return derive_training_metrics({events, samples, kT0, end_s, phases, faults, target_loss});
  }
};

const std::vector<int> kAll = {0, 1, 2, 3};

const reports::MetricRecord* find(const std::vector<reports::MetricRecord>& rs, const std::string& name,
                                  const std::string& phase, const char* key = nullptr,
                                  const std::string& value = "") {
  for (const auto& r : rs)
    if (r.name == name && reports::label_value(r.labels, "phase") == phase && (!key || reports::label_value(r.labels, key) == value))
      return &r;
  return nullptr;
}

double value(const std::vector<reports::MetricRecord>& rs, const std::string& name,
             const std::string& phase = "overall", const char* key = nullptr, const std::string& label = "") {
  const auto* r = find(rs, name, phase, key, label);
  INFO(name << " " << phase << " " << (key ? key : "") << "=" << label);
  REQUIRE(r != nullptr);
  return r->value;
}

}  // namespace

TEST_CASE("train derivation: a clean 4-rank run with one rank 3x slower in compute", "[train-derivation]") {
  RunEvents run;
  run.start(kAll, 1.0, 0, 4, 0, 0, "fresh");
  StepShape shape;
  shape.step_ms = 200;
  run.steps(kAll, 1, 50, 1.2, 0.2, shape, {{3, 180.0}});
  run.peak(0, 0.05);
  run.peak(1, 0.1);
  run.peak(2, 0.05);  // rank 3 measured none: it is held to the best peak, 0.1
  run.end_s = 12;
  run.phases = {{"baseline", 0, 12}};
  run.target_loss = 1.0;
  auto rs = run.derive();

  CHECK(value(rs, "train/throughput") == Approx(50 * 4 * 32 / 12.0));
  CHECK(value(rs, "train/throughput", "baseline") == Approx(50 * 4 * 32 / 12.0));
  CHECK(value(rs, "train/overlap") == Approx(75.0));
  // 1e9 FLOPs in 0.2 s = 5 GFLOP/s: 10% of 0.05 TFLOP/s, 5% of 0.1.
  const auto* mfu = find(rs, "train/mfu", "overall");
  REQUIRE(mfu);
  CHECK(mfu->value == Approx(7.5));
  CHECK(mfu->stats->n == 4);
  CHECK(mfu->stats->min == Approx(5.0));
  CHECK(value(rs, "train/rank_imbalance") == Approx(200.0));
  CHECK(find(rs, "train/rank_imbalance", "overall")->stats->n == 50);
  CHECK(value(rs, "train/straggler_score", "overall", "rank", "3") == Approx(1.0 / 3));
  CHECK(value(rs, "train/straggler_score", "overall", "rank", "0") == Approx(1.0));
  CHECK(find(rs, "train/straggler_score", "overall")->unit == "ratio");
  // Loss 2 - 0.03 * step first reaches 1.0 at step 34, t = 1.2 + 33 * 0.2.
  CHECK(value(rs, "train/time_to_target") == Approx(1.2 + 33 * 0.2));
  CHECK(value(rs, "train/loss_ratio") == Approx(0.5 / 1.97));
  CHECK_FALSE(find(rs, "train/loss_ratio", "baseline"));

  CHECK(value(rs, "resilience/restarts") == 0);
  CHECK(value(rs, "resilience/goodput") == Approx(100.0 * 50 * 0.2 / 12));
  CHECK(value(rs, "resilience/badput", "overall", "bucket", "startup") == Approx(100.0 / 12));
  CHECK(value(rs, "resilience/badput", "overall", "bucket", "wasted_progress") == 0);
  CHECK(value(rs, "resilience/badput", "overall", "bucket", "other") == Approx(100.0 / 12));
  CHECK_FALSE(find(rs, "resilience/time_to_detect", "overall"));
  CHECK_FALSE(find(rs, "resilience/throughput_retention", "baseline"));
}

TEST_CASE("train derivation: a restart after a kill resumes from the step-50 checkpoint", "[train-derivation]") {
  RunEvents run;
  run.start(kAll, 1.0, 0, 4, 0, 0, "fresh");
  run.steps(kAll, 1, 60, 1.1, 0.1);  // step 60 at t = 7.0
  run.event(0, 6.05, "checkpoint_saved",
            {{"step", 50}, {"kind", std::string("full")}, {"bytes", 1000}, {"raw_bytes", 1000},
             {"blocking_ms", 50.0}, {"write_ms", 40.0}});
  run.fault("kill", 7.05);
  run.event(kHarnessRank, 7.25, "failure_detected", {{"reason", std::string("rank 2 died")}});
  run.event(0, 7.3, "failure_detected", {{"step", 60}, {"error", std::string("peer closed")}});
  run.event(kHarnessRank, 7.3, "restart", {{"attempt", 1}, {"ranks", 4}});
  for (int r : kAll)
    run.event(r, 7.9, "checkpoint_restored",
              {{"step", 50}, {"ms", r == 1 ? 200.0 : 150.0}, {"file", std::string("ckpt-50")}, {"fallback", 0}});
  run.start(kAll, 8.0, 50, 4, 0, 1, "restored");
  StepShape resumed;
  resumed.attempt = 1;
  run.steps(kAll, 51, 100, 8.1, 0.1, resumed);  // step 100 at t = 13.0
  run.end_s = 13.5;
  run.phases = {{"baseline", 0, 7.05}, {"fault:kill", 7.05, 13.5}};
  auto rs = run.derive();

  const auto* detect = find(rs, "resilience/time_to_detect", "overall", "fault", "kill");
  REQUIRE(detect);
  CHECK(detect->value == Approx(0.2));
  CHECK(detect->unit == "s");
  CHECK(reports::label_value(detect->labels, "occurrence") == "1");
  CHECK(value(rs, "resilience/time_to_recover") == Approx(8.1 - 7.05));
  CHECK(value(rs, "resilience/lost_steps") == 10);
  CHECK(value(rs, "resilience/restarts") == 1);

  // 100 productive steps of 0.1 s; steps 51-60 of attempt 0 were computed again.
  const double wall = 13.5;
  CHECK(value(rs, "resilience/goodput") == Approx(100.0 * 10.0 / wall));
  auto bucket = [&](const char* b) { return value(rs, "resilience/badput", "overall", "bucket", b); };
  CHECK(bucket("wasted_progress") == Approx(100.0 * 1.0 / wall));
  CHECK(bucket("startup") == Approx(100.0 * 1.0 / wall));
  CHECK(bucket("checkpoint_save") == Approx(100.0 * 0.05 / wall));
  CHECK(bucket("checkpoint_restore") == Approx(100.0 * 0.2 / wall));
  CHECK(bucket("stalled") == Approx(100.0 * 0.2 / wall));
  CHECK(bucket("recovery") == Approx(100.0 * (8.0 - 7.25 - 0.2) / wall));
  double sum = value(rs, "resilience/goodput");
  for (const char* b : {"startup", "checkpoint_save", "checkpoint_restore", "wasted_progress", "stalled", "recovery",
                        "other"})
    sum += bucket(b);
  CHECK(sum == Approx(100.0));

  const double baseline = 60 * 4 * 32 / 7.05, during = 50 * 4 * 32 / (13.5 - 7.05);
  CHECK(value(rs, "resilience/throughput_retention", "fault:kill") == Approx(during / baseline));

  // The time lost, by part: the harness noticed at 7.25; the ranks restarted by 8.0 (the
  // first complete step at 8.1 began at 8.0), 0.2 s of it the restore; steps 51-60 and
  // the 0.05 s of step 61 in flight at the kill are computed again (fault-free step 0.1 s).
  auto lost = [&](const char* part) {
    const reports::MetricRecord* per_failure = nullptr;
    for (const auto& r : rs)
      if (r.name == "resilience/time_lost" && reports::label_value(r.labels, "part") == part &&
          reports::label_value(r.labels, "fault") == "kill")
        per_failure = &r;
    REQUIRE(per_failure);
    CHECK(value(rs, "resilience/time_lost", "overall", "part", part) == Approx(per_failure->value));  // one: its median
    return per_failure->value;
  };
  CHECK(lost("detect") == Approx(0.2));
  CHECK(lost("restore") == Approx(0.2));
  CHECK(lost("restart") == Approx(8.0 - 7.25 - 0.2));
  CHECK(lost("recompute") == Approx(10 * 0.1 + 0.05));
  CHECK(value(rs, "resilience/ettr") == Approx(10.0 / (13.5 - 1.0)));
  // Steps 2-60 and 52-100 (step 51 follows the restart): 108 pairs of 0.1 s in 0.1 s.
  CHECK(value(rs, "resilience/running_efficiency") == Approx(1.0));
  CHECK(value(rs, "resilience/mtti_observed") == Approx(13.5 - 1.0));
}

TEST_CASE("train derivation: train/mfu_hw is measured against compute/peak_tflops, train/mfu against the GEMM",
          "[train-derivation]") {
  RunEvents run;
  run.start({0, 1}, 1.0, 0, 2, 0, 0, "fresh");
  run.steps({0, 1}, 1, 10, 1.2, 0.2);  // 1e9 FLOPs per 100 ms step: 10 GFLOP/s per rank
  run.peak(0, 0.05);
  run.peak(1, 0.05);
  for (int rank : {0, 1})
    run.samples.push_back(
        {bench::Sample{rank, kT0 + 0.5, "compute/peak_tflops", 0.2, "TFLOP/s", {}}, kT0 + 0.5});
  run.end_s = 3.5;
  run.phases = {{"baseline", 0, 3.5}};
  auto rs = run.derive();
  CHECK(value(rs, "train/mfu") == Approx(20.0));
  CHECK(value(rs, "train/mfu_hw") == Approx(5.0));
  CHECK(find(rs, "train/mfu_hw", "overall")->unit == "%");

  RunEvents no_peak;  // a trainer that sends no hardware peak gets no train/mfu_hw
  no_peak.steps({0}, 1, 5, 1.0, 0.1);
  no_peak.peak(0, 0.05);
  no_peak.end_s = 2;
  no_peak.phases = {{"baseline", 0, 2}};
  auto plain = no_peak.derive();
  CHECK(find(plain, "train/mfu", "overall"));
  CHECK_FALSE(find(plain, "train/mfu_hw", "overall"));
}

// An outside trainer (a PyTorch script) that sends no attempt or generation, restarted
// from scratch with no checkpoint: the 100 steps it computes again are wasted progress,
// and the buckets add up to the wall time with only the idle gaps left in "other".
TEST_CASE("train derivation: a restart from scratch without attempt fields wastes the recomputed steps",
          "[train-derivation]") {
  RunEvents run;
  const std::vector<int> two = {0, 1};
  auto start = [&](double t) {
    for (int r : two) run.event(r, t, "train_start", {{"step", 0}, {"world", 2}, {"reason", std::string("fresh")}});
  };
  auto steps = [&](std::int64_t last, double t) {
    for (std::int64_t s = 1; s <= last; ++s, t += 0.1)
      for (int r : two) run.event(r, t, "step", {{"step", s}, {"step_ms", 100.0}, {"samples", 64}});
  };
  start(1.0);
  steps(100, 1.1);  // step 100 at t = 11.0
  run.fault("kill", 11.05);
  run.event(kHarnessRank, 11.06, "failure_detected", {{"reason", std::string("rank 1 was ended by a fault")}});
  run.event(kHarnessRank, 13.0, "restart", {{"attempt", 1}, {"ranks", 2}});
  start(14.0);
  steps(150, 14.1);  // step 150 at t = 29.0
  run.end_s = 29.5;
  run.phases = {{"baseline", 0, 11.05}, {"fault:kill", 11.05, 29.5}};
  auto rs = run.derive();

  CHECK(value(rs, "resilience/lost_steps") == 100);
  const double wall = 29.5;
  auto bucket = [&](const char* b) { return value(rs, "resilience/badput", "overall", "bucket", b); };
  CHECK(value(rs, "resilience/goodput") == Approx(100.0 * 15.0 / wall));
  CHECK(bucket("wasted_progress") == Approx(100.0 * 10.0 / wall));
  CHECK(bucket("startup") == Approx(100.0 * 1.0 / wall));
  CHECK(bucket("stalled") == Approx(100.0 * 0.01 / wall));
  CHECK(bucket("recovery") == Approx(100.0 * (14.0 - 11.06) / wall));
  // Left over: 11.0 -> 11.05 before the kill and 29.0 -> 29.5 after the last step.
  CHECK(bucket("other") == Approx(100.0 * 0.55 / wall));
  double sum = value(rs, "resilience/goodput");
  for (const char* b : {"startup", "checkpoint_save", "checkpoint_restore", "wasted_progress", "stalled", "recovery",
                        "other"})
    sum += bucket(b);
  CHECK(sum == Approx(100.0));
}

TEST_CASE("train derivation: an elastic kill continues on 3 survivors without losing steps", "[train-derivation]") {
  RunEvents run;
  run.start(kAll, 1.0, 0, 4, 0, 0, "fresh");
  run.steps(kAll, 1, 40, 1.1, 0.1);  // step 40 at t = 5.0
  run.fault("kill", 5.05);
  run.event(kHarnessRank, 5.06, "failure_detected", {{"reason", std::string("rank 3 died")}});
  for (int r : {0, 1, 2}) run.event(r, 5.5, "failure_detected", {{"step", 40}, {"error", std::string("timeout")}});
  run.start({0, 1, 2}, 6.0, 40, 3, 1, 0, "recovered");
  StepShape three;
  three.generation = 1;
  three.world = 3;
  run.steps({0, 1, 2}, 41, 60, 6.1, 0.1, three);  // step 60 at t = 8.0
  run.event(kHarnessRank, 7.5, "restart", {{"attempt", 0}, {"ranks", 1}});
  run.start({3}, 8.05, 60, 4, 2, 0, "rejoined");
  run.start({0, 1, 2}, 8.05, 60, 4, 2, 0, "recovered");
  StepShape four;
  four.generation = 2;
  run.steps(kAll, 61, 80, 8.15, 0.1, four);
  run.end_s = 10.5;
  run.phases = {{"baseline", 0, 5.05}, {"fault:kill", 5.05, 10.5}};
  auto rs = run.derive();

  CHECK(value(rs, "resilience/time_to_detect") == Approx(0.01));
  CHECK(value(rs, "resilience/time_to_recover") == Approx(6.1 - 5.05));
  CHECK(value(rs, "resilience/lost_steps") == 0);
  CHECK(value(rs, "resilience/restarts") == 1);
  CHECK(value(rs, "resilience/badput", "overall", "bucket", "wasted_progress") == 0);
  CHECK(value(rs, "resilience/badput", "overall", "bucket", "recovery") == Approx(100.0 * (6.0 - 5.06) / 10.5));
  CHECK(value(rs, "resilience/goodput") == Approx(100.0 * 80 * 0.1 / 10.5));
  CHECK(value(rs, "resilience/throughput_retention", "fault:kill") < 1.0);
  // Survivors step again at 6.0; rank 3 rejoins: the last step before that round at 8.0,
  // its first complete step at 8.15, one step of it productive.
  CHECK(value(rs, "resilience/time_lost", "overall", "part", "restart") == Approx(6.0 - 5.06));
  CHECK(value(rs, "resilience/time_lost", "overall", "part", "recompute") == Approx(0.05));
  CHECK(value(rs, "resilience/time_lost", "overall", "part", "restore") == 0);
  CHECK(value(rs, "resilience/time_lost", "overall", "part", "rejoin") == Approx(8.15 - 8.0 - 0.1));
}

TEST_CASE("train derivation: a delay that only slows training has retention but no detection", "[train-derivation]") {
  RunEvents run;
  run.start(kAll, 1.0, 0, 4, 0, 0, "fresh");
  run.steps(kAll, 1, 40, 1.05, 0.1);  // 40 steps in the 5 s baseline
  StepShape slow;
  slow.step_ms = 200;
  run.steps(kAll, 41, 55, 5.05, 0.2, slow);  // 15 steps in the 3 s fault window
  run.steps(kAll, 56, 75, 8.05, 0.1);
  run.fault("slow", 5.0, 8.0);
  run.end_s = 10;
  run.phases = {{"baseline", 0, 5}, {"fault:slow", 5, 8}, {"recovery:slow", 8, 10}};
  auto rs = run.derive();

  CHECK_FALSE(find(rs, "resilience/time_to_detect", "overall"));
  CHECK_FALSE(find(rs, "resilience/time_to_recover", "overall"));
  CHECK_FALSE(find(rs, "resilience/lost_steps", "overall"));
  CHECK(value(rs, "train/throughput", "fault:slow") == Approx(15 * 128 / 3.0));
  CHECK(value(rs, "resilience/throughput_retention", "fault:slow") == Approx((15 * 128 / 3.0) / (40 * 128 / 5.0)));
  CHECK_FALSE(find(rs, "resilience/throughput_retention", "recovery:slow"));
  CHECK(value(rs, "train/throughput", "recovery:slow") == Approx(20 * 128 / 2.0));
}

TEST_CASE("train derivation: nothing to derive from, and a run that never recovers", "[train-derivation]") {
  RunEvents empty;
  empty.end_s = 10;
  empty.phases = {{"baseline", 0, 10}};
  CHECK(empty.derive().empty());

  // A plain trainer that sends only {"step": N}: no throughput, no goodput, no crash.
  RunEvents plain;
  for (int s = 1; s <= 5; ++s) plain.event(0, s, "step", {{"step", s}});
  plain.end_s = 6;
  plain.phases = {{"baseline", 0, 6}};
  auto rs = plain.derive();
  CHECK_FALSE(find(rs, "train/throughput", "overall"));
  CHECK_FALSE(find(rs, "resilience/goodput", "overall"));
  CHECK_FALSE(find(rs, "train/straggler_score", "overall"));
  CHECK(value(rs, "resilience/restarts") == 0);

  // The restart brings back 2 of 4 ranks before the run ends: detected, never recovered.
  RunEvents stuck;
  stuck.start(kAll, 1.0, 0, 4, 0, 0, "fresh");
  stuck.steps(kAll, 1, 30, 1.1, 0.1);
  stuck.event(kHarnessRank, 2.0, "failure_detected", {{"reason", std::string("before any fault")}});
  stuck.fault("kill", 4.05);
  stuck.event(kHarnessRank, 4.5, "failure_detected", {{"reason", std::string("rank 1 died")}});
  stuck.event(kHarnessRank, 4.6, "restart", {{"attempt", 1}, {"ranks", 4}});
  stuck.start({0, 2}, 5.5, 20, 4, 0, 1, "restored");
  StepShape resumed;
  resumed.attempt = 1;
  stuck.steps({0, 2}, 21, 22, 5.6, 0.1, resumed);
  stuck.end_s = 8;
  stuck.phases = {{"baseline", 0, 4.05}, {"fault:kill", 4.05, 8}};
  rs = stuck.derive();
  CHECK(value(rs, "resilience/time_to_detect") == Approx(0.45));
  CHECK_FALSE(find(rs, "resilience/time_to_recover", "overall"));
  CHECK(value(rs, "resilience/lost_steps") == 10);
  CHECK(value(rs, "resilience/restarts") == 1);
}

}  // namespace train_derivation_test
