// chaosbench faults / metrics / version — print the registries, as tables or JSON.
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <iostream>
#include <optional>
#include <nlohmann/json.hpp>

#include "common/metrics/metric_catalogue.h"
#include "faults/registry/registry.h"
#include "harness/cli/cli_options.h"
#include "harness/core/exit_code.h"

namespace chaosbench::harness {
namespace {

std::vector<std::string> target_form_names(std::uint32_t forms) {
  std::vector<std::string> out;
  for (auto f : {faults::TargetForm::kAll, faults::TargetForm::kNodes, faults::TargetForm::kRanks,
                 faults::TargetForm::kRandom, faults::TargetForm::kPercent, faults::TargetForm::kLinks,
                 faults::TargetForm::kGroups})
    if (faults::accepts(forms, f)) out.emplace_back(faults::to_string(f));
  return out;
}

// Parses --json; nullopt when --help was asked (and printed).
std::optional<bool> parse_json_flag(const Args& args, const std::string& usage, const std::string& summary) {
  po::options_description options("Options");
  options.add_options()("json", "print JSON instead of a table");
  auto cl = parse_command_line(args, options, {});
  if (cl.help) {
    print_help(usage, summary, options);
    return std::nullopt;
  }
  return cl.vm.count("json") > 0;
}

}  // namespace

int cmd_faults(const Args& args) {
  auto json_flag = parse_json_flag(args, "chaosbench faults [--json]",
                               "Lists every fault type with its parameters (kind, default, meaning),\n"
                               "the target forms it accepts and whether it can be reverted.");
  if (!json_flag) return kExitPass;
  const bool json_out = *json_flag;
  const auto registry = faults::fault_registry();
  if (json_out) {
    nlohmann::ordered_json out = nlohmann::ordered_json::array();
    for (const auto& t : registry) {
      nlohmann::ordered_json params = nlohmann::ordered_json::array();
      for (const auto& p : faults::declared_params(t))
        params.push_back({{"name", p.name}, {"kind", faults::to_string(p.kind)}, {"required", p.required},
                          {"default", p.default_text}, {"description", p.description}});
      out.push_back({{"type", t.type}, {"summary", t.summary}, {"reversible", t.reversible},
                     {"needs_namespaces", t.needs_namespaces}, {"needs_cgroup", t.needs_cgroup},
                     {"targets", target_form_names(t.target_forms)},
                     {"surfaces", t.surfaces}, {"workloads", t.workloads},
                     {"params", params}});
    }
    std::cout << out.dump(2) << "\n";
    return kExitPass;
  }
  for (const auto& t : registry) {
    std::cout << fmt::format("{}\n  {}\n  targets: {}; {}{}{}\n", t.type, t.summary,
                             fmt::join(target_form_names(t.target_forms), ", "),
                             t.reversible ? "reverted after its duration" : "irreversible: never reverted",
                             t.needs_namespaces ? "; needs the namespaced cluster" : "",
                             t.needs_cgroup.empty() ? "" : fmt::format("; needs the node {} cgroup (root)", t.needs_cgroup));
    if (!t.surfaces.empty()) std::cout << fmt::format("  surfaces: {}\n", t.surfaces);
    if (!t.workloads.empty()) std::cout << fmt::format("  acted out by workloads: {}\n", t.workloads);
    const auto params = faults::declared_params(t);
    if (params.empty()) std::cout << "  parameters: none\n";
    for (const auto& p : params)
      std::cout << fmt::format("  {:<14} {:<10} {:<10} {}\n", p.name, faults::to_string(p.kind),
                               p.required ? "required" : (p.default_text.empty() ? "optional" : p.default_text),
                               p.description);
  }
  std::cout << "\nEvery fault also takes: name, target, at | at_step, duration, repeat {every, count}\n"
               "(docs/scenario-format.md). With a train workload, a type that takes nodes or ranks also\n"
               "takes the parallel groups pp_stage, tp_group and dp_replica (docs/hybrid-parallel.md).\n";
  return kExitPass;
}

int cmd_metrics(const Args& args) {
  auto json_flag = parse_json_flag(args, "chaosbench metrics [--json]",
                               "Lists the metric catalogue: name, unit, which direction is better, how samples\n"
                               "combine into a phase's value, and the definition.");
  if (!json_flag) return kExitPass;
  const bool json_out = *json_flag;
  if (json_out) {
    nlohmann::ordered_json out = nlohmann::ordered_json::array();
    for (const auto& m : common::metric_catalogue())
      out.push_back({{"name", m.name}, {"unit", m.unit}, {"better", common::to_string(m.better)},
                     {"aggregation", common::to_string(m.aggregation)}, {"description", m.description}});
    std::cout << out.dump(2) << "\n";
    return kExitPass;
  }
  std::cout << fmt::format("{:<34} {:<10} {:<7} {}\n", "name", "unit", "better", "definition");
  for (const auto& m : common::metric_catalogue())
    std::cout << fmt::format("{:<34} {:<10} {:<7} {}\n", m.name, m.unit.empty() ? "-" : m.unit,
                             common::to_string(m.better), m.description);
  return kExitPass;
}

int cmd_version(const Args& args) {
  po::options_description options("Options");
  auto cl = parse_command_line(args, options, {});
  if (cl.help) {
    print_help("chaosbench version", "Prints the version of chaosbench and what it was built with.", options);
    return kExitPass;
  }
  std::cout << fmt::format("chaosbench {}\nresults schema_version 1, scenario schema_version 1\nCUDA: {}\n",
                           CHAOSBENCH_VERSION, CHAOSBENCH_CUDA_BUILT ? "enabled at build time" : "disabled at build time");
  return kExitPass;
}

}  // namespace chaosbench::harness
