#include "faults/node/signal_fault.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <fstream>
#include <string.h>
#include <unistd.h>

#include "common/kernel/sysfs_file.h"

namespace chaosbench::faults {
namespace {

constexpr BackendOption kSignalOptions[] = {{"signal", {}}};
constexpr BackendChoice kSignalBackends{"", kSignalOptions};
constexpr std::array kSignalParams{
    ParamSpec{"signal", ParamKind::kString, true, "", "signal name or number: \"SIGTERM\", \"USR1\", \"9\""}};

}  // namespace

int parse_signal(const std::string& name) {
  if (!name.empty() && std::all_of(name.begin(), name.end(), [](char c) { return std::isdigit(static_cast<unsigned char>(c)); }))
    return name.size() < 3 && std::stoi(name) > 0 && std::stoi(name) < NSIG ? std::stoi(name) : -1;
  std::string upper;
  for (char c : name) upper.push_back(static_cast<char>(std::toupper(static_cast<unsigned char>(c))));
  if (upper.starts_with("SIG")) upper = upper.substr(3);
  for (int sig = 1; sig < NSIG; ++sig) {
    const char* abbrev = sigabbrev_np(sig);
    if (abbrev && upper == abbrev) return sig;
  }
  return -1;
}

void SignalFault::do_apply(const ResolvedTarget& target) {
  for (pid_t pid : target.pids) {
    if (group_) ::kill(-pid, signal_);
    else ::kill(pid, signal_);
    ended_.push_back(pid);
  }
  if (!group_) return;
  // A node's processes that left their process group are still in its cgroup.
  auto cg = target.cgroups.find("pids");
  if (cg == target.cgroups.end()) cg = target.cgroups.find("freezer");
  if (cg == target.cgroups.end()) return;
  for (const auto& dir : cg->second) {
    // v2 (5.14+): echo 1 > <node>/cgroup.kill SIGKILLs the whole subtree at once, racing
    // no fork. Elsewhere, or for another signal, each process listed is signalled.
    if (target.cgroup_version == 2 && signal_ == SIGKILL && ::access((dir + "/cgroup.kill").c_str(), W_OK) == 0) {
      try {
        common::write_setting(dir + "/cgroup.kill", "1");
        continue;
      } catch (const std::exception&) {
        // fall back to the processes one by one
      }
    }
    std::ifstream procs(dir + "/cgroup.procs");
    pid_t pid;
    while (procs >> pid) ::kill(pid, signal_);
  }
}

const BackendChoice& signal_backends() { return kSignalBackends; }
std::span<const ParamSpec> kill_params() { return {}; }
std::span<const ParamSpec> signal_params() { return kSignalParams; }

std::unique_ptr<Fault> make_node_kill(const Params&) { return std::make_unique<SignalFault>(SIGKILL, true); }
std::unique_ptr<Fault> make_rank_kill(const Params&) { return std::make_unique<SignalFault>(SIGKILL, true); }
std::unique_ptr<Fault> make_process_signal(const Params& params) {
  return std::make_unique<SignalFault>(parse_signal(params.get<std::string>("signal")), false);
}

}  // namespace chaosbench::faults
