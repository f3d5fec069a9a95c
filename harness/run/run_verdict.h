// The run's own verdict while it runs: failures fold into it (reports/model/judgement.h: the
// first failure stands, an interruption overrides), with when the first one happened
// (the peers' grace period counts from it) and whether the host refused something. The
// result's final verdict also folds in the checks (result_builder.h) and a baseline gate;
// the exit code is computed once from it and source() (cli/report_output.h, through
// harness/core/exit_code.h).
// Threads: the run's thread only.
#pragma once

#include <optional>
#include <string>

#include "harness/core/exit_code.h"
#include "reports/model/judgement.h"

namespace chaosbench::harness {

class RunVerdict {
 public:
  // Records a failure at `now_s` (logged when it is the first). `source` kHostLimit: the
  // host could not do what was asked (exit 3).
  void fail(std::string reason, double now_s, reports::Verdict verdict = reports::Verdict::kFail,
            VerdictSource source = VerdictSource::kThisRun);
  // A SIGINT or SIGTERM: the verdict becomes interrupted, whatever came before.
  void interrupt(int signal);
  // A stop condition or the kill switch: the verdict becomes aborted (only an
  // interruption overrides it).
  void abort(std::string reason);
  // The system was not steady before the first fault (a `before` probe failed): the run
  // fails, but goes on without faults, so no peer grace period starts.
  void not_steady(std::string reason);

  const reports::Judgement& judgement() const { return judgement_; }
  bool errored() const { return judgement_.verdict == reports::Verdict::kError; }
  // When the first failure happened (seconds since the workload started).
  std::optional<double> first_failure_s() const { return first_failure_s_; }
  // What the exit code needs besides the result's final verdict: kHostLimit once the host
  // refused something (exit 3), else kThisRun.
  VerdictSource source() const { return source_; }

 private:
  reports::Judgement judgement_;
  VerdictSource source_ = VerdictSource::kThisRun;
  std::optional<double> first_failure_s_;
};

}  // namespace chaosbench::harness
