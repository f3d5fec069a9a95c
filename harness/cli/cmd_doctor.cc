// chaosbench doctor — what this host can inject, and with which backend. Probes the host
// (harness/doctor/host_probe.h) and prints the report as grouped tables or one JSON object.
// Doctor reports; it does not fail: exit 0 whenever the probe ran, 2 on usage errors.
#include <algorithm>
#include <cstdlib>
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <iostream>
#include <nlohmann/json.hpp>
#include <string_view>

#include "harness/cli/cli_options.h"
#include "harness/core/exit_code.h"
#include "harness/doctor/blas_choice.h"
#include "harness/doctor/host_probe.h"
#include "reports/model/blas_json.h"

namespace chaosbench::harness {
namespace {

struct GroupTitle {
  std::string_view group, title;
};

constexpr GroupTitle kGroups[] = {
    {"host", "host"},
    {"namespaces", "network namespaces"},
    {"kernel", "kernel features (traffic control, netfilter)"},
    {"cgroups", "cgroups"},
    {"tools", "tools on PATH"},
    {"gpu", "GPU"},
    {"transport", "transport"},
};

nlohmann::ordered_json report_json(const HostReport& report) {
  using nlohmann::ordered_json;
  const auto& h = report.host;
  ordered_json out;
  out["host"] = {{"hostname", h.hostname},
                 {"kernel_release", h.kernel_release},
                 {"machine", h.machine},
                 {"cpus", h.cpu_count},
                 {"memory_total_bytes", h.memory_total_bytes},
                 {"os", h.os_release},
                 {"root", h.root},
                 {"cap_net_admin", h.cap_net_admin},
                 {"cap_sys_admin", h.cap_sys_admin}};
  out["capabilities"] = ordered_json::array();
  for (const auto& c : report.capabilities)
    out["capabilities"].push_back({{"name", c.name}, {"group", c.group}, {"status", to_string(c.status)},
                                   {"detail", c.detail}, {"impact", c.impact}});
  // backends: family -> the backend a run would use, null when it cannot be injected here;
  // backend_details keeps every usable backend and the reasons behind the choice.
  out["backends"] = ordered_json::object();
  out["backend_details"] = ordered_json::object();
  for (const auto& b : report.backends) {
    out["backends"][b.fault] = b.usable.empty() ? ordered_json(nullptr) : ordered_json(b.usable.front());
    out["backend_details"][b.fault] = {{"usable", b.usable}, {"detail", b.detail}};
  }
  out["cluster"] = report.cluster_mode;
  out["cluster_detail"] = report.cluster_detail;
  out["probe_ms"] = static_cast<double>(report.probe_duration.count()) / 1000.0;
  return out;
}

std::string report_text(const HostReport& report) {
  std::size_t name_width = 0;
  for (const auto& c : report.capabilities) name_width = std::max(name_width, c.name.size());
  constexpr std::size_t kStatusWidth = 7;  // "missing"
  const std::string impact_indent(2 + kStatusWidth + 2 + name_width + 2, ' ');

  std::string out = fmt::format("chaosbench doctor: what this host can inject, and with which backend\n"
                                "(probed in {:.1f} ms, read-only but for the BLAS probe's cache)\n",
                                static_cast<double>(report.probe_duration.count()) / 1000.0);
  for (const auto& [group, title] : kGroups) {
    bool header = false;
    for (const auto& c : report.capabilities) {
      if (c.group != group) continue;
      if (!header) out += fmt::format("\n{}\n", title);
      header = true;
      out += fmt::format("  {:<{}}  {:<{}}  {}\n", to_string(c.status), kStatusWidth, c.name, name_width, c.detail);
      if (c.status != CapabilityStatus::kOk && !c.impact.empty())
        out += fmt::format("{}→ {}\n", impact_indent, c.impact);
    }
  }

  std::size_t fault_width = 0, backend_width = 0;
  for (const auto& b : report.backends) {
    fault_width = std::max(fault_width, b.fault.size());
    backend_width = std::max(backend_width, b.usable.empty() ? std::size_t{7} : b.usable.front().size());
  }
  out += "\nfault backends (the first usable backend is used)\n";
  for (const auto& b : report.backends) {
    std::vector<std::string> notes;
    if (b.usable.size() > 1)
      notes.push_back(fmt::format("also {}", fmt::join(b.usable.begin() + 1, b.usable.end(), ", ")));
    if (!b.detail.empty()) notes.push_back(b.detail);
    auto line = fmt::format("  {:<{}}  {:<{}}  {}", b.fault, fault_width,
                            b.usable.empty() ? "missing" : b.usable.front(), backend_width, fmt::join(notes, "; "));
    line.erase(line.find_last_not_of(' ') + 1);
    out += line + "\n";
  }
  out += fmt::format("\ncluster: {} ({})\n", report.cluster_mode, report.cluster_detail);
  return out;
}

// The BLAS section: the library's own kernel and the chosen one with their speeds, every
// candidate, and the CPU's peak they are judged against.
std::string blas_text(const BlasChoice& b) {
  std::string out = fmt::format("\nBLAS ({}; {} {})\n", b.library.empty() ? "library unknown" : b.library,
                                b.source == "cache" ? "probed" : "probed now,", b.probed_at);
  out += fmt::format("  detected  {:<14} {:>7.1f} GFLOP/s  the library's own choice for this CPU\n",
                     b.detected.empty() ? "?" : b.detected, b.detected_gflops);
  out += fmt::format("  chosen    {:<14} {:>7.1f} GFLOP/s  {}\n", b.chosen.empty() ? "(none)" : b.chosen,
                     b.chosen_gflops, b.reason);
  for (const auto& c : b.candidates) {
    const std::string name = c.name.empty() ? fmt::format("({})", c.corename) : c.name;
    out += fmt::format("    {:<16} {}\n", name,
                       c.problem.empty() ? fmt::format("{:.1f} GFLOP/s, error {:.1e}", c.gflops, c.max_error) : c.problem);
  }
  const auto& cpu = b.cpu;
  if (!cpu.known) return out + "  CPU peak: unknown (not x86-64, or the probe failed)\n";
  out += fmt::format("  CPU peak (fp32, one core): {} lanes x 2 x {} FMA unit{} x {:.2f} GHz = {:.1f} GFLOP/s\n", cpu.lanes,
                     std::max(cpu.fma_units, 1), cpu.fma_units == 1 ? "" : "s", cpu.clock_ghz, cpu.peak_gflops);
  out += fmt::format("    clock measured ({}); {} sustained {:.1f} GFLOP/s in an FMA loop", 
                     cpu.nominal_ghz > 0 ? fmt::format("/proc/cpuinfo says {:.2f} GHz", cpu.nominal_ghz) : "no cpu MHz",
                     cpu.isa, cpu.fma_gflops);
  if (b.chosen_gflops > 0 && cpu.peak_gflops > 0)
    out += fmt::format("; the chosen kernel reaches {:.0f}% of the peak", 100 * b.chosen_gflops / cpu.peak_gflops);
  return out + "\n";
}

}  // namespace

int cmd_doctor(const Args& args) {
  po::options_description options("Options");
  options.add_options()("json", "print one JSON object instead of tables")(
      "reprobe-blas", "measure the BLAS kernels again instead of reading the per-host cache");
  auto cl = parse_command_line(args, options, {});
  if (cl.help) {
    print_help("chaosbench doctor [--json] [--reprobe-blas]",
               "Probes this host, read-only but for the BLAS probe's cache, and reports what\n"
               "chaosbench can inject here: kernel traffic-control and netfilter features, cgroup\n"
               "controllers, tools, privileges and GPU, then the backend each fault family would use\n"
               "(netem, nfqueue, htb, cgroups, ...) and the cluster mode (network namespaces or\n"
               "local processes). Missing items say what they change. Then the BLAS kernel: the library's own choice, the fastest correct\n"
               "one (the workers get it), each candidate's speed, and the CPU's fp32 peak per core\n"
               "(measured once per host and cached). Exits 0 whenever the probe ran.",
               options);
    return kExitPass;
  }
  const auto report = probe_host();
  BlasChoiceOptions blas_options;
  blas_options.use_cache = cl.vm.count("reprobe-blas") == 0;
  blas_options.probe_anyway = true;  // doctor reports every kernel, whatever the user chose
  if (const char* user = std::getenv("OPENBLAS_CORETYPE"); user && *user) blas_options.user_coretype = user;
  const auto blas = choose_blas(blas_options);
  if (cl.vm.count("json")) {
    auto j = report_json(report);
    j["blas"] = reports::blas_json(blas);
    std::cout << j.dump(2) << "\n";
  } else {
    std::cout << report_text(report) << blas_text(blas);
  }
  return kExitPass;
}

}  // namespace chaosbench::harness
