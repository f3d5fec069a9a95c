#include "faults/node/cgroup_setting_fault.h"

#include <array>
#include <cmath>
#include <fmt/format.h>

#include "faults/node/sysfs_file.h"

namespace chaosbench::faults {

CgroupSettingFault::CgroupSettingFault(std::string controller, std::string file,
                                       std::function<std::string(const std::string&)> value_for, std::string backend)
    : controller_(std::move(controller)), file_(std::move(file)), backend_(std::move(backend)),
      value_for_(std::move(value_for)) {}

void CgroupSettingFault::do_apply(const ResolvedTarget& target) {
  auto it = target.cgroups.find(controller_);
  if (it == target.cgroups.end() || it->second.empty())
    throw FaultError(fmt::format("needs the {} cgroup of each node, which this run does not have "
                                 "(run as root on a host with cgroup v1; see chaosbench doctor)", controller_));
  try {
    for (const auto& dir : it->second) {
      std::string path = dir + "/" + file_;
      std::string original = read_setting(path);
      std::string value = value_for_(dir);
      entries_.push_back(log().record("write", {{"path", path}, {"value", original}}));
      originals_.emplace_back(path, original);
      write_setting(path, value);
    }
  } catch (...) {
    do_revert();  // never half-apply
    throw;
  }
}

void CgroupSettingFault::do_revert() {
  // Newest first, so a node changed twice ends with its first original. Every node is
  // restored even when one fails; a failed one stays in the journal for cleanup.
  std::string errors;
  for (std::size_t k = originals_.size(); k-- > 0;) {
    try {
      write_setting(originals_[k].first, originals_[k].second);
      log().done(entries_[k]);
    } catch (const FaultError& e) {
      errors += (errors.empty() ? "" : "; ") + std::string(e.what());
    }
  }
  originals_.clear();
  entries_.clear();
  if (!errors.empty()) throw FaultError(errors);
}

namespace {

constexpr std::array kCpuParams{
    ParamSpec{"cpus", ParamKind::kNumber, true, "", "CPUs the node may use, e.g. 0.2 for a fifth of one CPU", 0.01, 1024}};
constexpr std::array kMemoryParams{
    ParamSpec{"limit", ParamKind::kSize, true, "", "the node's memory limit, e.g. \"256MiB\"; past it the kernel reclaims or OOM-kills"}};

}  // namespace

std::span<const ParamSpec> cpu_throttle_params() { return kCpuParams; }

std::unique_ptr<Fault> make_cpu_throttle(const Params& params) {
  const double cpus = params.get<double>("cpus");
  return std::make_unique<CgroupSettingFault>(
      "cpu", "cpu.cfs_quota_us",
      [cpus](const std::string& dir) {
        // The kernel's minimum quota is 1 ms.
        auto period = std::stoll(read_setting(dir + "/cpu.cfs_period_us"));
        return std::to_string(std::max<long long>(1000, std::llround(cpus * static_cast<double>(period))));
      },
      "cpu cgroup (CFS quota)");
}

std::span<const ParamSpec> memory_limit_params() { return kMemoryParams; }

std::unique_ptr<Fault> make_memory_limit(const Params& params) {
  const auto bytes = params.get<Size>("limit").bytes;
  return std::make_unique<CgroupSettingFault>(
      "memory", "memory.limit_in_bytes", [bytes](const std::string&) { return std::to_string(bytes); },
      "memory cgroup");
}

}  // namespace chaosbench::faults
