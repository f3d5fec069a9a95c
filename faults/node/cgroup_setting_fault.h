// A fault that sets one cgroup file of each targeted node and restores it on revert:
// node.cpu_throttle (v1 cpu.cfs_quota_us, v2 cpu.max) and node.memory_limit (v1
// memory.limit_in_bytes, v2 memory.max). The original value is journaled before the
// write, so cleanup restores it too.
#pragma once

#include <functional>
#include <memory>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "faults/backend_choice.h"
#include "faults/fault.h"
#include "common/kernel/cgroup_files.h"

namespace chaosbench::faults {

class CgroupSettingFault : public Fault {
 public:
  // What to write in a node's `dir`, given the cgroup version and the setting's `original`
  // content (it may read the node's other settings).
  using ValueFor = std::function<std::string(int version, const std::string& dir, const std::string& original)>;

  // `controller` names the cgroup hierarchy; `knob` the setting in each node's directory
  // (its file depends on the target's cgroup version); `value_for` computes the value.
  CgroupSettingFault(std::string controller, common::CgroupKnob knob, ValueFor value_for);
  std::string backend() const override { return backend_; }

 private:
  void do_apply(const ResolvedTarget& target) override;
  void do_revert() override;

  std::string controller_;
  common::CgroupKnob knob_;
  std::string backend_;
  ValueFor value_for_;
  std::vector<std::pair<std::string, std::string>> originals_;  // path, value
  std::vector<std::uint64_t> entries_;
};

// node.cpu_throttle: limit the node to `cpus` CPUs (0.2 = a fifth of one) with the CFS
// quota: v1 cpu.cfs_quota_us = cpus x cpu.cfs_period_us; v2 cpu.max = "QUOTA PERIOD".
std::span<const ParamSpec> cpu_throttle_params();
std::unique_ptr<Fault> make_cpu_throttle(const Params& params);
// The cpu cgroup (cgroup.cpu); nothing else.
const BackendChoice& cpu_throttle_backends();

// node.memory_limit: lower the node's memory limit (v1 memory.limit_in_bytes, v2
// memory.max) to `limit`.
std::span<const ParamSpec> memory_limit_params();
std::unique_ptr<Fault> make_memory_limit(const Params& params);
// The memory cgroup (cgroup.memory); nothing else.
const BackendChoice& memory_limit_backends();

}  // namespace chaosbench::faults
