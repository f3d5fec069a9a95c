#include "harness/plan/workload_blas.h"

#include <cstdlib>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "harness/doctor/blas_choice.h"
#include "harness/workloads/workload_plan.h"

namespace chaosbench::harness {

std::optional<reports::BlasRecord> choose_workload_blas(const Scenario& scenario, const std::string& self_exe,
                                                        std::map<std::string, std::string>& env) {
  const auto workload = make_workload_plan(scenario);
  if (!workload->uses_blas()) return std::nullopt;
  BlasChoiceOptions o;
  o.self_exe = self_exe;
  if (const char* user = std::getenv("OPENBLAS_CORETYPE"); user && *user) o.user_coretype = user;
  if (auto coretype = workload->scenario_blas_coretype()) {
    o.user_coretype = *coretype;
    o.user_source = "scenario";
  }
  auto choice = choose_blas(o);
  spdlog::info("{}", describe(choice));
  // The user's own value reaches the workers as it is (inherited or from `env`).
  if (choice.source != "environment" && choice.source != "scenario" && !choice.chosen.empty())
    env["OPENBLAS_CORETYPE"] = choice.chosen;
  if (choice.cpu.known && choice.cpu.peak_gflops > 0)
    env["CHAOSBENCH_CPU_PEAK_GFLOPS"] = fmt::format("{:.3f}", choice.cpu.peak_gflops);
  return choice;
}

}  // namespace chaosbench::harness
