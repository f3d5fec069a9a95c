// A fault that sets one cgroup file of each targeted node and restores it on revert:
// node.cpu_throttle (cpu.cfs_quota_us) and node.memory_limit (memory.limit_in_bytes).
// The original value is journaled before the write, so cleanup restores it too.
#pragma once

#include <functional>
#include <memory>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "faults/fault.h"

namespace chaosbench::faults {

class CgroupSettingFault : public Fault {
 public:
  // `controller` names the cgroup hierarchy; `file` the setting in each node's directory;
  // `value_for(dir)` computes the value to write (it may read the node's other settings).
  CgroupSettingFault(std::string controller, std::string file, std::function<std::string(const std::string&)> value_for,
                     std::string backend);
  std::string backend() const override { return backend_; }

 private:
  void do_apply(const ResolvedTarget& target) override;
  void do_revert() override;

  std::string controller_, file_, backend_;
  std::function<std::string(const std::string&)> value_for_;
  std::vector<std::pair<std::string, std::string>> originals_;  // path, value
  std::vector<std::uint64_t> entries_;
};

// node.cpu_throttle: limit the node to `cpus` CPUs (0.2 = a fifth of one) with the CFS
// quota: cpu.cfs_quota_us = cpus x cpu.cfs_period_us.
std::span<const ParamSpec> cpu_throttle_params();
std::unique_ptr<Fault> make_cpu_throttle(const Params& params);

// node.memory_limit: lower the node's memory limit (memory.limit_in_bytes) to `limit`.
std::span<const ParamSpec> memory_limit_params();
std::unique_ptr<Fault> make_memory_limit(const Params& params);

}  // namespace chaosbench::faults
