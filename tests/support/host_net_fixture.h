// Test-only: three network namespaces on one bridge that play hosts for the host-mode
// network tests. A (node 0) and B (node 1) are the job; C is a host outside
// it on the same subnet, reached through the same interface of A. Faults are made
// through the registry, as the agent makes them. The namespaces go with the fixture,
// on failure too.
#pragma once

#include <cstdint>
#include <functional>
#include <future>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "common/kernel/netns.h"
#include "faults/network/network_plane.h"
#include "faults/registry/registry.h"
#include "harness/cluster/netns_cluster.h"
#include "harness/journal/journal.h"
#include "net_probe.h"

namespace chaosbench::test {

constexpr int kA = 0, kB = 1, kC = 2;

// The entries a fault journaled and has not closed: what cleanup would find after a crash.
class OpenEntries final : public faults::UndoLog {
 public:
  std::uint64_t record(const std::string& kind, std::map<std::string, std::string> fields) override;
  void done(std::uint64_t id) override { open_.erase(id); }
  std::size_t open() const { return open_.size(); }
  // The first open entry of `kind`, or null.
  const harness::JournalEntry* find(const std::string& kind) const;

 private:
  std::uint64_t last_ = 0;
  std::map<std::uint64_t, harness::JournalEntry> open_;
};

// Three hosts on one subnet; the job is A and B.
struct Hosts {
  harness::NetnsCluster cluster;
  OpenEntries log;

  Hosts();
  int fd(int node) const { return cluster.node_netns_fd(node); }
  const std::string& address(int node) const { return cluster.address(node); }
  // The plane the agent on host `local` makes: its namespace, its interface, the job.
  std::unique_ptr<faults::NetworkPlane> plane(int local) const;
  // The run's bridge plane over the same three namespaces, to compare with.
  std::unique_ptr<faults::NetworkPlane> bridge_plane() const;
  PingResult ping(int from, int to, bool user_to_user = false) const {
    return test::ping(fd(from), address(to), 5, 0.2, user_to_user);
  }
  // A process in host `node`'s namespace for 3 s, as on a real host: cleanup finds the
  // namespace through one. Returns once it has started.
  std::future<common::CommandOutput> keep_process_in(int node) const;
  // What `argv` prints inside host `node`'s namespace.
  std::string run(int node, std::vector<std::string> argv) const;
  // What of ours is on a host: a root qdisc other than the kernel's default (handle 0:)
  // on its interface, or a chain of ours in its filter or mangle table.
  std::string leftovers(int node) const;
};

// Both job hosts are as they were, and every journal entry is closed.
void check_nothing_left(const Hosts& h);

faults::ResolvedTarget on_node(faults::NetworkPlane& plane, int node);

// A fault of registry type `type` with its declared defaults and `values`, as the agent
// makes one from the scenario's parameters.
std::unique_ptr<faults::Fault> make_fault(std::string_view type,
                                          const std::map<std::string, faults::ParamValue>& values);

std::unique_ptr<faults::Fault> delay_20ms(const std::string& direction, const std::string& backend = "auto");

// A fault as the job's agents hold it: one of the same type and parameters on each job
// host's plane, applied to the same target, node A.
struct JobFault {
  std::unique_ptr<faults::Fault> on_a, on_b;
  void revert() {
    on_a->revert();
    on_b->revert();
  }
};
// `make()`'s faults applied on A's plane `a`, then on B's plane `b`, journaled in h.log.
JobFault apply_on_job(Hosts& h, faults::NetworkPlane& a, faults::NetworkPlane& b,
                      const std::function<std::unique_ptr<faults::Fault>()>& make);

}  // namespace chaosbench::test
