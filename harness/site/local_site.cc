#include "harness/site/local_site.h"

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fmt/format.h>
#include <fstream>
#include <netinet/in.h>
#include <sstream>
#include <sys/socket.h>
#include <unistd.h>

#include "common/gpu/fault_control.h"
#include "common/kernel/cgroup_files.h"
#include "faults/registry/registry.h"
#include "faults/target.h"
#include "harness/cluster/netns_cluster.h"
#include "harness/cluster/node_state.h"
#include "harness/core/host_error.h"
#include "harness/journal/process_group_undo.h"

namespace chaosbench::harness {
namespace {

// A free TCP port on loopback (bound then released; the workload binds it).
int free_loopback_port() {
  int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return 29500;
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof(addr);
  int port = 29500;
  if (::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) == 0 &&
      ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) == 0)
    port = ntohs(addr.sin_port);
  ::close(fd);
  return port;
}

}  // namespace

LocalSite::LocalSite(const ClusterSpec& cluster, std::uint64_t seed, Journal& journal, NodeCgroups& cgroups,
                     ClusterNetwork& network, std::string runtime_dir)
    : cluster_(cluster), seed_(seed), journal_(journal), cgroups_(cgroups), network_(network),
      control_dir_(std::move(runtime_dir) + "/control") {
  // chaosbench forks nothing but the workload, so every other child it has at the end
  // is an orphaned workload descendant: none may outlive the run.
  supervisor_.set_kill_adopted_orphans(true);
  // Journal each process group and put it in its node's cgroups before it may exec (see
  // ProcessSupervisor::set_on_forked): nothing of it runs unrecorded or outside.
  supervisor_.set_on_forked([this](pid_t pid) {
    std::string cgroup;  // the node's cgroup it joins: cleanup's proof of the run's orphans
    for (const char* c : {"freezer", "pids", "cpu", "memory"})
      if (cgroup.empty() && cgroups_.available()) cgroup = cgroups_.dir(starting_node_, c);
    process_entries_.push_back(journal_.record_process_group(pid, cgroup));
    if (cgroups_.available()) cgroups_.join(starting_node_, pid);
  });
}

pid_t LocalSite::start(int node, ProcessSpec spec) {
  starting_node_ = node;
  spec.netns_fd = network_.netns_fd(node);
  spec.uts_fd = network_.uts_fd(node);
  spec.mnt_fd = network_.mnt_fd(node);
  spec.env[kProcessMarkerEnv] = journal_.process_marker();  // see process_group_undo.h
  return supervisor_.start(spec);
}

std::vector<std::string> LocalSite::stop_all() {
  supervisor_.stop_all();
  if (stopped_) return {};
  stopped_ = true;
  // Every process group is gone; the journal confirms it of each.
  std::vector<std::string> errors;
  for (auto id : process_entries_) {
    try {
      journal_.undo(id);
    } catch (const std::exception& e) {
      errors.emplace_back(e.what());
    }
  }
  return errors;
}

int LocalSite::free_port(int node) {
  if (!network_.namespaced()) return free_loopback_port();  // any user may bind it first: see docs
  // Probed where it is bound: in the node's namespace nobody but the run can take the port
  // between this probe and the workload's bind.
  int port = 29500;
  NetnsCluster::in_netns(network_.netns_fd(node), [&] { port = free_loopback_port(); });
  return port;
}

// One control block per rank, made before the rank first starts and kept across
// restarts: a fault armed on a rank stays armed for the process that replaces it, as a
// broken GPU stays broken.
std::string LocalSite::control_block(int rank) {
  const std::string path = faults::control_path(control_dir_, rank);
  if (control_fds_.count(rank)) return path;
  std::filesystem::create_directories(control_dir_);
  const int fd = common::FaultControl::create(path, static_cast<std::uint64_t>(rank));
  if (fd < 0) throw HostError(fmt::format("cannot create the fault control block {}: {}", path, std::strerror(errno)));
  control_fds_.emplace(rank, common::UniqueFd(fd));
  return path;
}

std::unique_ptr<faults::Fault> LocalSite::apply_fault(const FaultSpec& spec, std::size_t fault_index,
                                                      const std::vector<RankProcess>& ranks,
                                                      std::vector<std::string>* targets) {
  auto target = resolve_target(spec.target, cluster_, ranks, seed_, fault_index, &cgroups_);
  target.network = network_.plane();
  target.control_dir = control_dir_;
  *targets = target.names();
  auto fault = faults::find_fault_type(spec.type)->make(spec.params);
  fault->apply(target, journal_);
  return fault;
}

bool LocalSite::frozen(int node) const { return node_frozen(cgroups_, node); }

bool LocalSite::oom_killed(int node) const { return node_oom_killed(cgroups_, node); }

}  // namespace chaosbench::harness
