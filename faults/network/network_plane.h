// What network faults act on: the run's node namespaces, their addresses, the bridge
// namespace with one port per node, and the per-run state faults share there (the tc
// shapers of each interface, NFQUEUE numbers, iptables chain names). The runner makes
// one when the cluster runs in network namespaces and hands it to faults through
// ResolvedTarget::network; a local cluster has none, and network faults refuse it.
// In host mode (for_host) the plane is one real host's of a job that spans hosts: no
// bridge, one interface, and every rule matches this host's address and a job peer's.
//
// Every change goes through here with its undo journaled first:
//   "tc_root"        {netns, interface, handle}: the htb root a shaper created
//   "iptables_chain" {netns, chain, hook[, table]}: a chain of ours and the jump to it
//                    from hook (FORWARD in the bridge namespace; in host mode OUTPUT, or
//                    INPUT of table "mangle" for the delay line); no table: "filter"
// netns is "net:[inode]", as /proc/PID/ns/net names it, and netns_cookie its
// SO_NETNS_COOKIE: after a crash, cleanup finds the namespace through a process still in
// it and acts only when the cookie matches too (inode numbers are reused), or it is gone
// and so is everything in it.
//
// Part of the faults' public face (with fault.h, registry.h, target.h, param.h): the
// cluster builds the plane, network faults act on it.
// Threads: the runner's thread only (faults apply and revert there).
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "faults/fault.h"
#include "faults/network/tc_shaper.h"
#include "faults/undo_log.h"

namespace chaosbench::faults {

struct NetworkNode {
  int netns_fd = -1;
  std::string address;      // IPv4, dotted quad
  std::string bridge_port;  // its veth peer in the bridge namespace ("n3")
};

class NetworkPlane {
 public:
  NetworkPlane(int bridge_netns_fd, std::vector<NetworkNode> nodes, std::string node_interface, std::uint64_t seed);
  // Host mode: the plane of one host of a job, made by the agent there. `netns_fd`: the
  // host's own network namespace (an fd of /proc/self/ns/net; borrowed, it must outlive
  // the plane); `interface`: the allow-listed interface every rule goes on;
  // `node_addresses`: each job host's IPv4 address by node index; `local_node`: this
  // host's index. Faults then place only this host's share: what it sends to the job's
  // other hosts (host_share in network/traffic_flows.h), or for the nfqueue delay line
  // what it receives from them (host_receive_share, on its INPUT hook), each rule
  // matching this host's address and one peer's, so traffic with any other address is
  // untouched. Throws FaultError, changing nothing, when an address is not IPv4,
  // local_node is out of range, or the interface is not in the namespace or does not
  // carry the local address (faults on it would then never see the job's traffic).
  // Needs CAP_SYS_ADMIN (it enters the namespace to look).
  static std::unique_ptr<NetworkPlane> for_host(int netns_fd, std::string interface,
                                                std::vector<std::string> node_addresses, int local_node,
                                                std::uint64_t seed);
  ~NetworkPlane();
  NetworkPlane(const NetworkPlane&) = delete;
  NetworkPlane& operator=(const NetworkPlane&) = delete;

  int nodes() const { return static_cast<int>(nodes_.size()); }
  const NetworkNode& node(int n) const { return nodes_.at(static_cast<std::size_t>(n)); }
  int bridge_netns_fd() const { return bridge_fd_; }  // -1 in host mode
  // This host's node index in host mode; -1 in bridge mode.
  int local_node() const { return local_node_; }
  bool host_mode() const { return local_node_ >= 0; }
  const std::string& node_interface() const { return node_interface_; }
  std::uint64_t seed() const { return seed_; }

  // A traffic-control rule on `interface` in `netns_fd`: the shaper's root is journaled
  // before it is created, and the entry is closed when its last rule goes. Returns a
  // handle for remove_shape. Throws FaultError with the kernel's reason.
  struct ShapeHandle {
    int netns_fd = -1;
    std::string interface;
    int id = 0;
  };
  ShapeHandle add_shape(int netns_fd, const std::string& interface, const ShapeRule& rule, UndoLog& log);
  void remove_shape(const ShapeHandle& handle);  // idempotent

  // An iptables chain of ours in the bridge namespace's filter table, holding `rules`
  // (each the arguments after "-A CHAIN"), jumped to first from FORWARD: every packet
  // between two nodes crosses the bridge once, so it meets the rules once. Bridged IPv4
  // traffic meets iptables only while the namespace's bridge-nf-call-iptables is 1: the
  // plane turns it off when it starts, on with the first chain and off after the last,
  // so no phase pays for netfilter on the bridge but the fault windows that use it. Journaled before it exists; one
  // iptables-restore per call. Throws FaultError with iptables' message.
  struct ChainHandle {
    int netns_fd = -1;
    std::string chain;
    std::string hook;
    std::uint64_t entry = 0;
    std::string table = "filter";
  };
  ChainHandle add_bridge_chain(const std::vector<std::string>& rules, UndoLog& log);
  void remove_chain(ChainHandle& handle);  // idempotent; throws FaultError on failure

  // Host mode: a rule on the host's interface for what this host sends to node
  // `receiver`: `rule` with match_src the local address and match_dst the receiver's
  // (whatever it held), journaled as add_shape does.
  ShapeHandle add_host_shape(int receiver, ShapeRule rule, UndoLog& log);
  // Host mode: a chain of ours in the host namespace's filter table holding `rules`,
  // jumped to first from OUTPUT (the host's own sending), journaled as add_bridge_chain's.
  // The host's table is shared with others, so the chain is made with -N, which fails
  // rather than take over a chain of that name, and a name in use is skipped.
  ChainHandle add_host_chain(const std::vector<std::string>& rules, UndoLog& log);
  // Host mode: the same, in the mangle table, jumped to first from INPUT (what this host
  // receives). Mangle, not filter: a packet an NFQUEUE rule queues and the delay line
  // accepts leaves the rest of its table, and the filter table's INPUT (the host's
  // firewall) comes after mangle's, so it still sees every packet.
  ChainHandle add_host_input_chain(const std::vector<std::string>& rules, UndoLog& log);

  // "-s 10.a.b.1 -d 10.a.b.2" for a flow between nodes (an end that is any node is left out).
  std::string match(int sender, int receiver) const;

  // A fresh NFQUEUE number (unique within the run, so within each namespace).
  std::uint16_t next_queue() { return next_queue_++; }

  // "net:[4026532567]" for an open namespace fd.
  static std::string netns_id(int netns_fd);

  // Whether netem can be used here (cached probe; `why` gets the reason when not).
  static bool netem_available(std::string* why = nullptr) { return TcShaper::netem_available(why); }

 private:
  struct HostMode {};
  NetworkPlane(HostMode, int netns_fd, std::vector<NetworkNode> nodes, std::string interface, int local_node,
               std::uint64_t seed);
  TcShaper& shaper(int netns_fd, const std::string& interface);
  // A new chain name in `netns_fd`'s `table`, jumped to from `hook`, journaled (not made yet).
  ChainHandle journal_chain(int netns_fd, const char* table, const char* hook, UndoLog& log);
  ChainHandle add_fresh_host_chain(const char* table, const char* hook, const std::vector<std::string>& rules,
                                   UndoLog& log);

  int bridge_fd_;
  int local_node_ = -1;
  std::vector<NetworkNode> nodes_;
  std::string node_interface_;
  std::uint64_t seed_;
  std::map<std::pair<int, std::string>, std::unique_ptr<TcShaper>> shapers_;
  std::map<std::pair<int, std::string>, std::uint64_t> root_entries_;  // journal ids
  std::map<std::pair<int, std::string>, int> rule_counts_;
  std::uint16_t next_queue_ = 100;
  int next_chain_ = 0;
  int bridge_chains_ = 0;  // chains in the bridge namespace: bridge-nf-call-iptables is on while > 0
  UndoLog* log_ = nullptr;
};

// Runs `undo` on every handle, all of them even when some fail, then empties the list;
// throws FaultError with every failure's message. The reverts of the network faults.
template <class Handle, class Undo>
void undo_all(std::vector<Handle>& handles, Undo undo) {
  std::string errors;
  for (auto& h : handles) {
    try {
      undo(h);
    } catch (const std::exception& e) {
      errors += (errors.empty() ? "" : "; ") + std::string(e.what());
    }
  }
  handles.clear();
  if (!errors.empty()) throw FaultError(errors);
}

// Pipes `script` into `iptables-restore --noflush` inside the namespace (one transaction
// for the table); "" on success, else iptables' own message. Blocks (about 15 ms).
std::string iptables_restore(int netns_fd, const std::string& script);

// Whether chain `chain` exists in the namespace's `table`.
bool iptables_chain_exists(int netns_fd, const std::string& chain, const std::string& table = "filter");

// The iptables-restore input that removes chain `chain` of `table` and the jump to it
// from `hook`; used by NetworkPlane and by cleanup after a crash.
std::string remove_chain_script(const std::string& chain, const std::string& hook,
                                const std::string& table = "filter");

}  // namespace chaosbench::faults
