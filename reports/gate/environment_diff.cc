#include "reports/gate/environment_diff.h"

#include <cmath>

#include <fmt/format.h>
#include <fmt/ranges.h>

namespace chaosbench::reports {
namespace {

std::string or_none(const std::string& s) { return s.empty() ? "(none)" : s; }

std::string list_or_none(const std::vector<std::string>& v) {
  return v.empty() ? "(none)" : fmt::format("{}", fmt::join(v, ", "));
}

}  // namespace

std::vector<std::string> environment_differences(const Environment& baseline, const Environment& current) {
  std::vector<std::string> out;
  auto differ = [&](const char* what, const std::string& a, const std::string& b) {
    out.push_back(fmt::format("{}: {} (baseline) vs {} (current)", what, a, b));
  };
  if (baseline.testbed != current.testbed) differ("testbed", or_none(baseline.testbed), or_none(current.testbed));
  if (!baseline.cpu_model.empty() && !current.cpu_model.empty() && baseline.cpu_model != current.cpu_model)
    differ("CPU model", baseline.cpu_model, current.cpu_model);
  if (baseline.cpus > 0 && current.cpus > 0 && baseline.cpus != current.cpus)
    differ("CPUs", std::to_string(baseline.cpus), std::to_string(current.cpus));
  if (!baseline.cpu_flags.empty() && !current.cpu_flags.empty() && baseline.cpu_flags != current.cpu_flags)
    differ("CPU extensions", list_or_none(baseline.cpu_flags), list_or_none(current.cpu_flags));
  if (baseline.memory_bytes > 0 && current.memory_bytes > 0) {
    const double a = static_cast<double>(baseline.memory_bytes), b = static_cast<double>(current.memory_bytes);
    if (std::abs(a - b) > 0.05 * std::max(a, b))
      differ("memory", fmt::format("{:.1f} GiB", a / (1u << 30)), fmt::format("{:.1f} GiB", b / (1u << 30)));
  }
  // GPUs only where both fingerprints have the field (a GPU-less run lists none).
  if (!baseline.cpu_model.empty() && !current.cpu_model.empty() && baseline.gpus != current.gpus)
    differ("GPUs", list_or_none(baseline.gpus), list_or_none(current.gpus));
  return out;
}

}  // namespace chaosbench::reports
