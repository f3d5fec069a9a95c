#include "reports/model/judgement.h"

#include <fmt/format.h>

namespace chaosbench::reports {

Judgement fold(Judgement so_far, Judgement next) {
  if (next.verdict == Verdict::kInterrupted && so_far.verdict != Verdict::kInterrupted) return next;
  // An abort stopped the run on purpose: it explains everything after it (and a failure
  // before it is usually what the stop condition saw); only an interruption overrides it.
  if (next.verdict == Verdict::kAborted && so_far.verdict != Verdict::kInterrupted &&
      so_far.verdict != Verdict::kAborted)
    return next;
  if (so_far.verdict == Verdict::kPass) return next;
  return so_far;
}

Judgement judge_checks(const std::vector<CheckResult>& checks) {
  std::size_t failed = 0;
  const CheckResult* first = nullptr;
  for (const auto& c : checks) {
    if (c.status != CheckStatus::kFail) continue;
    if (++failed == 1) first = &c;
  }
  if (!first) return {};
  return {Verdict::kFail, fmt::format("{} check{} failed: {}", failed, failed == 1 ? "" : "s", first->message)};
}

Judgement judge_gate(const Comparison& comparison) {
  if (comparison.verdict != GateStatus::kFail) return {};
  std::size_t failed = 0;
  std::string first;
  for (const auto& m : comparison.metrics) {
    if (m.status != GateStatus::kFail) continue;
    if (++failed == 1) first = fmt::format("{} {}: {}", m.name, m.stat, m.reason);
  }
  return {Verdict::kFail, fmt::format("baseline gate: {} regression{}: {}", failed, failed == 1 ? "" : "s", first)};
}

namespace {

void set_judgement(RunResult& run, Judgement judged) {
  run.verdict = judged.verdict;
  run.reason = std::move(judged.reason);
}

}  // namespace

void judge_result(RunResult& run, Judgement during) {
  set_judgement(run, fold(std::move(during), judge_checks(run.checks)));
}

void judge_comparison(RunResult& run, Comparison comparison) {
  run.comparison = std::move(comparison);
  set_judgement(run, fold({run.verdict, std::move(run.reason)}, judge_gate(*run.comparison)));
}

}  // namespace chaosbench::reports
