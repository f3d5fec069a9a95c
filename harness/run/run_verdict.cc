#include "harness/run/run_verdict.h"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

namespace chaosbench::harness {

void RunVerdict::fail(std::string reason, double now_s, reports::Verdict verdict, VerdictSource source) {
  if (judgement_.verdict == reports::Verdict::kPass) spdlog::error("{}", reason);
  judgement_ = reports::fold(std::move(judgement_), {verdict, std::move(reason)});
  if (source != VerdictSource::kThisRun) source_ = source;
  if (!first_failure_s_) first_failure_s_ = now_s;
}

void RunVerdict::interrupt(int signal) {
  judgement_ = reports::fold(std::move(judgement_),
                             {reports::Verdict::kInterrupted, fmt::format("interrupted by signal {}", signal)});
  spdlog::warn("{}: stopping every process and reverting every fault", judgement_.reason);
}

void RunVerdict::abort(std::string reason) {
  judgement_ = reports::fold(std::move(judgement_), {reports::Verdict::kAborted, std::move(reason)});
  spdlog::warn("aborted: {}: reverting every fault and stopping the workload", judgement_.reason);
}

void RunVerdict::not_steady(std::string reason) {
  if (judgement_.verdict == reports::Verdict::kPass) spdlog::error("{}", reason);
  judgement_ = reports::fold(std::move(judgement_), {reports::Verdict::kFail, std::move(reason)});
}

}  // namespace chaosbench::harness
