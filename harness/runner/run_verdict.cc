#include "harness/runner/run_verdict.h"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

namespace chaosbench::harness {

void RunVerdict::fail(std::string reason, double now_s, std::string verdict, int exit_code) {
  if (verdict_ == "pass") {
    verdict_ = std::move(verdict);
    reason_ = std::move(reason);
    spdlog::error("{}", reason_);
  }
  if (exit_code != kExitPass) exit_code_ = exit_code;
  if (!first_failure_s_) first_failure_s_ = now_s;
}

void RunVerdict::interrupt(int signal) {
  verdict_ = "interrupted";
  reason_ = fmt::format("interrupted by signal {}", signal);
  spdlog::warn("{}: stopping every process and reverting every fault", reason_);
}

int RunVerdict::exit_code(const std::string& result_verdict) const {
  if (result_verdict == "interrupted") return kExitInterrupted;
  if (exit_code_ != kExitPass) return exit_code_;
  return result_verdict == "pass" ? kExitPass : kExitCheckFailed;
}

}  // namespace chaosbench::harness
