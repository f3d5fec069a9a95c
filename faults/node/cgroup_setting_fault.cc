#include "faults/node/cgroup_setting_fault.h"

#include <array>
#include <fmt/format.h>

#include "common/kernel/sysfs_file.h"

namespace chaosbench::faults {

CgroupSettingFault::CgroupSettingFault(std::string controller, common::CgroupKnob knob, ValueFor value_for)
    : controller_(std::move(controller)), knob_(knob), backend_(common::cgroup_backend(1, knob)),
      value_for_(std::move(value_for)) {}

void CgroupSettingFault::do_apply(const ResolvedTarget& target) {
  auto it = target.cgroups.find(controller_);
  if (it == target.cgroups.end() || it->second.empty())
    throw FaultError(fmt::format("needs the {} cgroup of each node, which this run does not have "
                                 "(run as root; on cgroup v2 the controller must be delegated to chaosbench's "
                                 "cgroup; see chaosbench doctor)", controller_));
  const int version = target.cgroup_version;
  backend_ = std::string(common::cgroup_backend(version, knob_));
  const std::string file(common::cgroup_file(version, knob_));
  // A failure halfway is rolled back by Fault::apply through do_revert: every file
  // written so far is in originals_.
  for (const auto& dir : it->second) {
    std::string path = dir + "/" + file;
    std::string original = common::read_setting(path);
    std::string value = value_for_(version, dir, original);
    entries_.push_back(log().record("write", {{"path", path}, {"value", original}}));
    originals_.emplace_back(path, original);
    common::write_setting(path, value);
  }
}

void CgroupSettingFault::do_revert() {
  // Newest first, so a node changed twice ends with its first original. Every node is
  // restored even when one fails; a failed one stays in the journal for cleanup.
  std::string errors;
  for (std::size_t k = originals_.size(); k-- > 0;) {
    try {
      common::write_setting(originals_[k].first, originals_[k].second);
      log().done(entries_[k]);
    } catch (const std::exception& e) {
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
constexpr std::string_view kCpuNeeds[] = {"cgroup.cpu"};
constexpr std::string_view kMemoryNeeds[] = {"cgroup.memory"};
constexpr BackendOption kCpuOptions[] = {{"cpu cgroup", kCpuNeeds}};
constexpr BackendOption kMemoryOptions[] = {{"memory cgroup", kMemoryNeeds}};
constexpr BackendChoice kCpuBackends{"", kCpuOptions};
constexpr BackendChoice kMemoryBackends{"", kMemoryOptions};

}  // namespace

std::span<const ParamSpec> cpu_throttle_params() { return kCpuParams; }

std::unique_ptr<Fault> make_cpu_throttle(const Params& params) {
  const double cpus = params.get<double>("cpus");
  return std::make_unique<CgroupSettingFault>(
      "cpu", common::CgroupKnob::kCpuQuota, [cpus](int version, const std::string& dir, const std::string& original) {
        // v2 keeps the period cpu.max already names; v1 keeps it in a file of its own.
        if (version == 2) return common::cpu_max_value(cpus, original);
        return std::to_string(common::cpu_quota_us(cpus, std::stoll(common::read_setting(dir + "/cpu.cfs_period_us"))));
      });
}

std::span<const ParamSpec> memory_limit_params() { return kMemoryParams; }
const BackendChoice& cpu_throttle_backends() { return kCpuBackends; }
const BackendChoice& memory_limit_backends() { return kMemoryBackends; }

std::unique_ptr<Fault> make_memory_limit(const Params& params) {
  const auto bytes = params.get<Size>("limit").bytes;
  return std::make_unique<CgroupSettingFault>(
      "memory", common::CgroupKnob::kMemoryLimit,
      [bytes](int, const std::string&, const std::string&) { return std::to_string(bytes); });
}

}  // namespace chaosbench::faults
