#include "harness/plan/workload_blas.h"

#include <cstdlib>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "harness/doctor/blas_choice.h"

namespace chaosbench::harness {

std::optional<reports::BlasRecord> choose_workload_blas(const Scenario& scenario, const std::string& self_exe,
                                                        std::map<std::string, std::string>& env) {
  if (std::holds_alternative<CollectiveWorkload>(scenario.workload)) return std::nullopt;
  BlasChoiceOptions o;
  o.self_exe = self_exe;
  if (const char* user = std::getenv("OPENBLAS_CORETYPE"); user && *user) o.user_coretype = user;
  if (const auto* command = std::get_if<CommandWorkload>(&scenario.workload)) {
    if (auto it = command->env.find("OPENBLAS_CORETYPE"); it != command->env.end()) {
      o.user_coretype = it->second;
      o.user_source = "scenario";
    }
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
