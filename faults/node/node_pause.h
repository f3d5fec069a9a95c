// node.pause: the hung node. Every process of the node stops for the fault's duration,
// then runs on: the cgroup freezer where the run has node cgroups (nothing escapes it,
// children included: v1 freezer.state, v2 cgroup.freeze), SIGSTOP/SIGCONT to the ranks'
// process groups otherwise.
#pragma once

#include <span>
#include <vector>

#include "faults/backend_choice.h"
#include "faults/fault.h"

namespace chaosbench::faults {

class NodePauseFault final : public Fault {
 public:
  static std::span<const ParamSpec> params();
  // The freezer cgroup (cgroup.freezer), else signals on any host.
  static const BackendChoice& backends();
  std::string backend() const override { return backend_; }

 private:
  void do_apply(const ResolvedTarget& target) override;
  void do_revert() override;

  std::string backend_ = "freezer cgroup";
  int version_ = 1;                           // cgroup version of frozen_
  std::vector<std::string> frozen_;           // freezer directories
  std::vector<std::pair<pid_t, std::uint64_t>> stopped_;  // process groups, journal ids
  std::vector<std::uint64_t> entries_;
};

}  // namespace chaosbench::faults
