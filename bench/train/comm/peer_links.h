// A hybrid-parallel rank's point-to-point links: one TCP connection to every other rank of
// the job (tcp_links.h), a receiver thread that reads every message as it arrives into a
// queue per (peer, tag), and blocking sends from the caller's thread. What the pipeline's
// activations and gradients, the TP exchange and the step's world sum travel on.
//
// Why not gloo's unbound buffers: gloo's TCP transport meets every message with a
// ready-to-receive round trip, and while a message waits for its receive to be posted
// its event loop wakes for it again and again; on cores the ranks share, a pipeline of
// small messages spent most of its step there (a 4-stage GPipe step of 3.5 ms of compute
// per stage took 276 ms). Here the kernel's socket buffers and the receiver thread take
// every message at once, whatever the order the caller asks for them in; the price is
// one copy out of the queue.
//
// Messages on one (peer, tag) arrive in the order they were sent. A message is a header
// (tag, byte count) and its payload; recv() must ask for exactly the size that was sent.
// The receiver reads one whole message at a time, so a peer stopped in the middle of one
// holds the others' back until it goes on (or the timeout ends its link).
// Failures: a peer that closes its connection, or sends a header the caller's `accept`
// refuses or longer than `max_message`, fails every later recv from it; a recv that waits
// longer than the timeout, a send that makes no progress for that long: CollectiveError
// naming the peer. The object is then unusable: destroy it.
// Threads: send and recv from one thread (the rank's compute thread); the receiver thread
// is the object's own. The destructor shuts the sockets down and joins it.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <mutex>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include <gloo/rendezvous/store.h>

namespace chaosbench::bench::train {

class PeerLinks {
 public:
  // Connects rank `rank` of `world` to every other through `store` (keys "<key>/<rank>"):
  // the lower rank of each pair connects, the higher accepts. Throws CollectiveError when
  // the mesh is not formed within `timeout`.
  // `accept(tag, bytes)` says whether a message may arrive (called on the receiver thread).
  PeerLinks(gloo::rendezvous::Store& store, const std::string& key, int rank, int world, const std::string& host,
            std::chrono::milliseconds timeout, std::function<bool(std::uint32_t tag, std::uint64_t bytes)> accept);
  ~PeerLinks();
  PeerLinks(const PeerLinks&) = delete;
  PeerLinks& operator=(const PeerLinks&) = delete;

  // Writes the message to `peer`'s connection; returns once the kernel has taken it.
  void send(int peer, std::uint32_t tag, const void* data, std::size_t bytes);
  // The next message `tag` from `peer`, copied into `data` (exactly `bytes`).
  void recv(int peer, std::uint32_t tag, void* data, std::size_t bytes);

 private:
  void receive_loop();
  void receive_until_closed();
  bool read_message(int peer);

  int rank_, world_;
  std::chrono::milliseconds timeout_;
  std::function<bool(std::uint32_t, std::uint64_t)> accept_;
  std::vector<int> fds_;  // per rank; -1 for this one
  int wake_[2] = {-1, -1};  // a pipe that ends the receiver's poll at shutdown

  std::mutex mutex_;
  std::condition_variable arrived_;
  std::map<std::pair<int, std::uint32_t>, std::deque<std::vector<char>>> queues_;  // under mutex_
  std::vector<std::string> broken_;  // under mutex_: per peer, why its link failed
  std::thread receiver_;
};

}  // namespace chaosbench::bench::train
