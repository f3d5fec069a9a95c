// The link mesh: a Pingmesh-style all-pairs prober that measures, during a run, every
// ordered pair of nodes' round-trip time and loss (net/pair_rtt, net/pair_loss) from one
// UDP socket per node made in the node's namespace, TWAMP-style (kernel receive stamps,
// the reflector's hold time subtracted), so a slow or lossy link or NIC shows without
// anyone saying where a fault was injected. How it measures, what it costs, how it
// stands hostile datagrams and how it runs across hosts: docs/diagnosis.md, "The link
// mesh" and "Across hosts".
//
// Contract: per window (MeshSpec::window) and ordered pair, net/pair_rtt is the median
// round trip of the echoes that came in the window and net/pair_loss the share of the
// probes sent in it with no echo within the timeout (1 s, or 3 ticks under 3 a second),
// emitted once that has passed; probes still out at stop() count neither way. Each tick
// reads at most 4 N + 64 datagrams a socket. Ticks and windows follow CLOCK_MONOTONIC,
// round trips and sample times the wall clock.
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
#include "common/files/unique_fd.h"
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
