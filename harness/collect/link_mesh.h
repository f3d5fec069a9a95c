// The link mesh: a Pingmesh-style all-pairs prober that measures, during a run, every
// ordered pair of nodes' round-trip time and loss (net/pair_rtt, net/pair_loss), so a
// slow or lossy link or NIC shows in the measurements without anyone saying where a fault
// was injected (docs/diagnosis.md).
//
// One UDP socket per node, made inside that node's network namespace and bound to its
// address, so every probe crosses the cluster's network as the workload's packets do (the
// node's veth, the bridge, any fault's qdisc, delay line or iptables rule) and is echoed
// by the destination node's socket. The round trip is measured as TWAMP does: the sender
// stamps the probe just before it sends it, the kernel stamps each arrival
// (SO_TIMESTAMPNS), and the reflector writes into its echo how long it held the probe
// (its send time less the kernel's arrival stamp), which is subtracted. So the figure is
// the network's round trip as ping measures it (ping too stamps in user space before it
// sends), and the time a busy machine keeps the mesh's thread from reading an arrival
// does not enter it.
//
// Budget: each node sends `rate` probes a second to each other node, 40-byte datagrams:
// rate x N x (N - 1) probes and as many echoes a second. The thread wakes only at ticks,
// `rate` a second: it reads what arrived since (the kernel stamped each datagram on
// arrival, and a reflector's echo says how long the probe waited), so reading late
// changes no round trip, and sends the next probes. One wake-up per datagram instead
// cost a collective on an oversubscribed 2-core machine a measurable share of its
// bandwidth (every wake-up of a thread outside the workload can pre-empt a rank).
//
// Per window (MeshSpec::window) and ordered pair: net/pair_rtt{src,dst} is the median
// round trip of the echoes that came in the window (none: no sample), net/pair_loss{src,
// dst} the share of the probes sent in the window that got no echo within the timeout (1
// s, or 3 ticks at rates under 3 a second), emitted once it has passed for all of them;
// the probes still out when the mesh stops count neither way.
//
// Hostile datagrams (a workload process in a node's namespace can send to the sockets):
// each carries a random token of the run; an echo counts only from the address and port
// of the node it claims, for a probe still waiting, with the probe's own send time; a
// hold time outside the round trip is refused; each tick reads at most 4 N + 64 datagrams
// per socket, so a flood cannot hold the thread (with user stamps, a socket that hit that
// cap is not polled again before the next tick). Ticks and windows follow CLOCK_MONOTONIC; the
// round trips and sample times the wall clock (the kernel's receive stamps are on it).
//
// Across hosts (the agent modes) each agent runs a mesh of one local node: the others are
// remote peers, probed at the address and port their own agents bound (MeshNode::local,
// ::port), and every agent of the run shares one token. Each agent then measures the
// pairs its node sends from; the controller gathers them all. There the arrival is
// stamped in user space (MeshStamps::kUser) and the thread wakes for every datagram: the
// kernel stamps a datagram as the interface takes it, before the host's INPUT hook, where
// a network fault's delay line holds what a host receives (and where any host-stack delay
// the workload meets is), so a kernel stamp would not see it. A host's agent wakes
// 2 rate (N - 1) times a second for it.
//
// Threads: start() and stop() from one thread; one thread of its own between them, which
// alone calls the sink.
#pragma once

#include <atomic>
#include <netinet/in.h>
#include <cstdint>
#include <functional>
#include <string>
#include <thread>
#include <vector>

#include "bench/protocol/record.h"
#include "common/unique_fd.h"
#include "harness/collect/mesh_window.h"
#include "harness/scenario/mesh_spec.h"

namespace chaosbench::harness {

struct MeshNode {
  int netns_fd = -1;    // the node's network namespace (-1: this process's), borrowed
  std::string address;  // IPv4, the node's address as its peers reach it
  std::string name;     // "node3", the label value
  bool local = true;    // this mesh binds its socket and probes from it; else a peer's
  std::uint16_t port = 0;  // a peer's UDP port (set_peer_port); a local node's is bound
};

// When a datagram's arrival is stamped: by the kernel as the interface takes it (read at
// ticks), or by the mesh's thread as it reads it (woken for each).
enum class MeshStamps { kKernel, kUser };

class LinkMesh {
 public:
  using Sink = std::function<void(const bench::Sample&)>;

  // Makes and binds every local node's socket; throws std::runtime_error saying which
  // node when one cannot be made (nothing of it is left open then), or when no node is
  // local. `token`: the run's, shared by every agent's mesh; 0 draws one. Sends nothing
  // before start().
  LinkMesh(std::vector<MeshNode> nodes, const MeshSpec& spec, Sink sink, std::uint64_t token = 0,
           MeshStamps stamps = MeshStamps::kKernel);
  ~LinkMesh();  // stop()
  LinkMesh(const LinkMesh&) = delete;
  LinkMesh& operator=(const LinkMesh&) = delete;

  void start();
  // Ends the thread (within one tick, plus 20 ms for the last echoes) and emits what the
  // last windows have; idempotent.
  void stop();

  // Probes sent and echoes taken so far (for the mesh's own cost, and tests).
  std::uint64_t probes_sent() const { return sent_.load(); }
  std::uint64_t echoes_received() const { return received_.load(); }
  // Datagrams refused: not ours (wrong size, magic or run token), from an address and
  // port that is not the node they claim, or an echo of no waiting probe.
  std::uint64_t refused() const { return refused_.load(); }
  // The CPU time the mesh's thread used, and how long it ran (seconds; final after stop()):
  // its own cost, beside the workload's.
  double cpu_seconds() const { return static_cast<double>(cpu_ns_.load()) / 1e9; }
  double wall_seconds() const { return static_cast<double>(wall_ran_ns_.load()) / 1e9; }
  // The UDP port node `node`'s socket is bound to (a peer's: as set).
  std::uint16_t port(std::size_t node) const { return sockets_.at(node).port; }
  // Where a remote node's socket is, as its agent reported; before start() only.
  void set_peer_port(std::size_t node, std::uint16_t port);
  std::uint64_t token() const { return token_; }

 private:
  struct Socket {
    common::UniqueFd fd;  // none for a remote node
    std::uint16_t port = 0;
  };
  struct Packet;
  void loop();
  void send_probes(std::size_t src, std::int64_t window);
  // Reads what waits on `node`'s socket, at most 4 N + 64 datagrams; true when it hit that cap.
  bool drain(std::size_t node);
  bool from_node(const sockaddr_in& from, std::size_t node) const;
  void on_probe(std::size_t node, Packet p, const sockaddr_in& from, std::int64_t rx_ns);
  void on_echo(std::size_t node, const Packet& p, const sockaddr_in& from, std::int64_t rx_ns);
  void close_windows(std::int64_t window);
  void emit(const char* name, std::size_t src, std::size_t dst, double value, const char* unit, double t);

  std::vector<MeshNode> nodes_;
  std::vector<std::uint32_t> addresses_;  // nodes_' addresses, network order
  MeshSpec spec_;
  Sink sink_;
  std::vector<Socket> sockets_;    // by node
  std::vector<std::size_t> local_;  // the nodes whose sockets this mesh holds
  std::vector<MeshWindow> pairs_;  // src * N + dst
  std::uint64_t token_ = 0;        // this run's: a datagram without it is not ours
  MeshStamps stamps_ = MeshStamps::kKernel;
  std::int64_t window_ns_ = 0;
  std::int64_t timeout_ns_ = 0;  // a probe without its echo this long after it was sent is lost
  std::int64_t origin_mono_ns_ = 0;  // when the loop began (CLOCK_MONOTONIC): window k starts k windows later
  std::int64_t origin_wall_ns_ = 0;  // the same instant on the wall clock, for sample times
  std::int64_t current_window_ = 0;  // the window the round trips being gathered fall in
  std::thread thread_;
  common::UniqueFd stop_fd_;  // eventfd: stop() wakes the loop
  std::atomic<std::uint64_t> sent_{0}, received_{0}, refused_{0};
  std::atomic<std::int64_t> cpu_ns_{0}, wall_ran_ns_{0};
};

}  // namespace chaosbench::harness
