// A verdict with its reason, and the one fold that forms a run's verdict from what
// happened to it: failures while it ran, an interruption, failed checks, a failed
// baseline gate. The run (harness RunVerdict) folds what happens while it runs; a
// result's verdict forms only in judge_result and judge_comparison below, which the
// result builder, the combination of repeated runs and the baseline gate call.
#pragma once

#include <string>
#include <vector>

#include "reports/model/run_model.h"

namespace chaosbench::reports {

struct Judgement {
  Verdict verdict = Verdict::kPass;
  std::string reason;  // empty for a pass
};

// `next` is what happened after `so_far`. An interruption overrides everything (the run
// did not finish, whatever else went wrong), then an abort (a stop condition or the kill
// switch stopped the run on purpose); otherwise the first failure stands, because a
// later one is usually its consequence; a pass adds nothing.
Judgement fold(Judgement so_far, Judgement next);

// Failed checks as a judgement: kFail, "N check(s) failed: <the first one's message>";
// a pass when every check passed.
Judgement judge_checks(const std::vector<CheckResult>& checks);

// A baseline comparison as a judgement: kFail when its verdict is FAIL, "baseline gate: N
// regression(s): <metric> <stat>: <reason of the first>"; a pass otherwise (WARN passes).
Judgement judge_gate(const Comparison& comparison);

// A finished run's verdict: `during` (what happened while it ran: the run's own fold, or
// the runs' own failures of a combined result) with the result's failed checks folded
// in. Sets run.verdict and run.reason.
void judge_result(RunResult& run, Judgement during);

// A baseline comparison of a judged result (run, report and repeated runs with
// --baseline): stored in run.comparison, and its failed gate folded into the verdict (it
// turns only a pass into a fail).
void judge_comparison(RunResult& run, Comparison comparison);

}  // namespace chaosbench::reports
