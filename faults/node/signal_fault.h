// Faults that signal processes and cannot be reverted: node.kill (every process of the
// node, SIGKILL), rank.kill (one rank's processes), process.signal (any signal to the
// chosen ranks). A kill's `restart_after` (an envelope key the registry allows for the
// kills) is the runner's to act on: it starts the ranks again as a replacement node would.
#pragma once

#include <csignal>
#include <memory>
#include <span>
#include <string_view>
#include <vector>

#include "faults/backend_choice.h"
#include "faults/fault.h"

namespace chaosbench::faults {

class SignalFault final : public Fault {
 public:
  // `group`: signal the ranks' whole process groups (their children too), and for a node
  // every process in its cgroup (a SIGKILL on cgroup v2 through cgroup.kill).
  SignalFault(int signal, bool group) : signal_(signal), group_(group) {}
  bool reversible() const override { return false; }
  std::string backend() const override { return "signal"; }
  std::vector<pid_t> ended_processes() const override { return ended_; }

 private:
  void do_apply(const ResolvedTarget& target) override;
  void do_revert() override {}

  int signal_;
  bool group_;
  std::vector<pid_t> ended_;
};

// "signal": any host (node.kill, rank.kill, process.signal).
const BackendChoice& signal_backends();

// The kills' own parameters: none (restart_after is the envelope's).
std::span<const ParamSpec> kill_params();
// What restart_after does after a kill (the registry's restart_after of node.kill, rank.kill).
inline constexpr std::string_view kKillRestartAfter = "start the killed ranks again after this long (a replacement node)";
std::span<const ParamSpec> signal_params();
std::unique_ptr<Fault> make_node_kill(const Params& params);
std::unique_ptr<Fault> make_rank_kill(const Params& params);
std::unique_ptr<Fault> make_process_signal(const Params& params);

// "SIGUSR1", "USR1", "usr1" or "10" -> 10; -1 when unknown.
int parse_signal(const std::string& name);

}  // namespace chaosbench::faults
