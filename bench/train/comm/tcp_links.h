// Plain TCP connections between the trainer's ranks, for the paths where gloo's transport
// costs too much (its per-message handshake and a busy event loop on small messages on
// shared cores): the gradient ring (tcp_ring_reducer.h) and a hybrid rank's point-to-point
// links (peer_links.h). Blocking sockets with Nagle off and send/receive timeouts, so a
// connection that makes no progress fails instead of hanging. Every failure is a
// CollectiveError naming `what` ("gradient ring", "pipeline links").
// Threads: pure functions over descriptors; no state.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>

#include <gloo/rendezvous/store.h>

namespace chaosbench::bench::train {

using TcpClock = std::chrono::steady_clock;

// The first bytes on a new connection: who is calling.
struct TcpHello {
  std::uint32_t magic;
  std::uint32_t rank;
};
inline constexpr std::uint32_t kTcpHelloMagic = 0x4f4c4548;  // "HELO"

// Nagle off, send and receive timeouts.
void configure_tcp_socket(int fd, std::chrono::milliseconds timeout);
// poll() for `events` until `deadline`; false when it passed (or poll failed).
bool wait_fd(int fd, short events, TcpClock::time_point deadline);

// A listening socket on `host` (port chosen by the kernel) whose "host:port" is published
// in `store` under `key`. Returns the descriptor (the caller closes it).
int listen_and_publish(gloo::rendezvous::Store& store, const std::string& key, const std::string& host,
                       const char* what);
// Connects to the address `peer_rank` published under `key`, says who we are (`rank`),
// and returns the blocking, configured descriptor.
int connect_published(gloo::rendezvous::Store& store, const std::string& key, int peer_rank, int rank,
                      std::chrono::milliseconds timeout, TcpClock::time_point deadline, const char* what);
// Accepts one connection on `listener` by `deadline` and reads its TcpHello: returns the
// configured descriptor, and the rank it says it is in `rank`.
int accept_hello(int listener, std::chrono::milliseconds timeout, TcpClock::time_point deadline, int& rank,
                 const char* what);

}  // namespace chaosbench::bench::train
