// A result's verdict forms in one place (reports/model/judgement.h): judge_result folds
// the failed checks into what happened while the run ran, judge_comparison a baseline
// gate into a judged result; each only ever turns a pass into a fail.
#include <catch2/catch.hpp>

#include "reports/model/judgement.h"

namespace judgement_test {  // this file's names, apart in a unity batch (tests/CMakeLists.txt)

using namespace chaosbench::reports;

namespace {

CheckResult check(CheckStatus status, std::string message) {
  return {"train/loss", {}, "<=", 1, 2.0, status, std::move(message)};
}

Comparison gate(GateStatus status) {
  Comparison c;
  MetricComparison m;
  m.name = "train/step_time";
  m.stat = "p50";
  m.status = status;
  m.reason = "+12% beyond 5%";
  c.metrics.push_back(m);
  c.verdict = status;
  return c;
}

}  // namespace

TEST_CASE("judgement: a result's checks turn only a pass into a fail", "[judgement]") {
  RunResult run;
  run.checks = {check(CheckStatus::kPass, "fine"), check(CheckStatus::kFail, "loss too high"),
                check(CheckStatus::kFail, "again")};
  judge_result(run, {});
  CHECK(run.verdict == Verdict::kFail);
  CHECK(run.reason == "2 checks failed: loss too high");

  judge_result(run, {Verdict::kFail, "rank 1 exited with code 3"});
  CHECK(run.verdict == Verdict::kFail);
  CHECK(run.reason == "rank 1 exited with code 3");  // the run's own failure stands
  for (Verdict v : {Verdict::kError, Verdict::kInterrupted, Verdict::kAborted}) {
    judge_result(run, {v, "why"});
    CHECK(run.verdict == v);
    CHECK(run.reason == "why");
  }

  run.checks = {check(CheckStatus::kPass, "fine")};
  judge_result(run, {});
  CHECK(run.verdict == Verdict::kPass);
  CHECK(run.reason.empty());
}

TEST_CASE("judgement: a baseline gate is stored and turns only a pass into a fail", "[judgement]") {
  RunResult run;
  judge_result(run, {});
  judge_comparison(run, gate(GateStatus::kWarn));  // WARN passes
  REQUIRE(run.comparison);
  CHECK(run.verdict == Verdict::kPass);

  judge_comparison(run, gate(GateStatus::kFail));
  CHECK(run.comparison->verdict == GateStatus::kFail);
  CHECK(run.verdict == Verdict::kFail);
  CHECK(run.reason == "baseline gate: 1 regression: train/step_time p50: +12% beyond 5%");

  RunResult aborted;
  judge_result(aborted, {Verdict::kAborted, "stop file"});
  judge_comparison(aborted, gate(GateStatus::kFail));
  CHECK(aborted.verdict == Verdict::kAborted);
  CHECK(aborted.reason == "stop file");
}

}  // namespace judgement_test
