// The run's own verdict while it runs: the first failure decides it ("fail" for the
// workload, "error" for the harness or a fault it could not apply or revert,
// "interrupted" for a signal) and its reason; later failures are logged but change
// nothing. The result's final verdict also folds in the checks (result_builder.h);
// exit_code() maps that to the exit code table (exit_code.h).
// Threads: the run's thread only.
#pragma once

#include <optional>
#include <string>

#include "harness/cli/exit_code.h"

namespace chaosbench::harness {

class RunVerdict {
 public:
  // Records a failure at `now_s`; the first one decides the verdict. `exit_code` is the
  // code an "error" verdict exits with (a host error is 3, anything else unexpected 2).
  void fail(std::string reason, double now_s, std::string verdict = "fail", int exit_code = kExitPass);
  // A SIGINT or SIGTERM: the verdict becomes "interrupted", whatever came before.
  void interrupt(int signal);

  const std::string& verdict() const { return verdict_; }
  const std::string& reason() const { return reason_; }
  bool passing() const { return verdict_ == "pass"; }
  bool errored() const { return verdict_ == "error"; }
  // When the first failure happened (seconds since the workload started).
  std::optional<double> first_failure_s() const { return first_failure_s_; }
  // The exit code for the result's final verdict `result_verdict`.
  int exit_code(const std::string& result_verdict) const;

 private:
  std::string verdict_ = "pass";
  std::string reason_;
  int exit_code_ = kExitPass;
  std::optional<double> first_failure_s_;
};

}  // namespace chaosbench::harness
