// A fault carried out by agents: the controller's handle on one scenario fault applied
// on several hosts at once (every host of the job for a network fault, each taking its
// own share of the traffic; the targeted nodes' hosts for the others). Applying sends the
// command to every host first and then collects the replies, so a fault reaches all
// hosts in one round trip; if any host fails, those that succeeded revert and the error
// names the host. Each agent journals its own share on its host.
// Threads: the run's thread only.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "faults/fault.h"
#include "harness/agent/agent_hub.h"

namespace chaosbench::harness {

class RemoteFault final : public faults::Fault {
 public:
  // `command` is the apply command without its fault id; `nodes` the agents that act;
  // `local_pid` turns an agent's pid into the controller's (for ended_processes).
  RemoteFault(AgentHub& hub, std::uint64_t id, nlohmann::json command, std::vector<int> nodes, bool reversible,
              std::function<pid_t(int node, pid_t remote)> local_pid);

  bool reversible() const override { return reversible_; }
  std::string backend() const override { return backend_; }
  std::vector<pid_t> ended_processes() const override { return ended_; }
  std::map<std::string, double> effect() const override { return effect_; }

 private:
  void do_apply(const faults::ResolvedTarget& target) override;
  void do_revert() override;

  AgentHub& hub_;
  std::uint64_t id_;
  nlohmann::json command_;
  std::vector<int> nodes_;
  std::vector<int> applied_on_;
  bool reversible_;
  std::function<pid_t(int, pid_t)> local_pid_;
  std::string backend_ = "agent";
  std::vector<pid_t> ended_;
  std::map<std::string, double> effect_;
};

}  // namespace chaosbench::harness
