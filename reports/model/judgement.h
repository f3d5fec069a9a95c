// A verdict with its reason, and the one fold that forms a run's verdict from what
// happened to it: failures while it ran, an interruption, failed checks, a failed
// baseline gate. The runner, the result builder and the gate all go through fold().
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

}  // namespace chaosbench::reports
