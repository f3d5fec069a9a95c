// The rendezvous store the controller serves to ranks on other hosts ("tcp:ADDR:PORT"
// stores, cluster modes with agents): a key -> bytes map behind a TCP socket on every
// address (an ephemeral port), speaking common/json/store_wire.h. A client's first frame
// must carry the run's token; anything else drops it. Keys, values, the number of keys,
// their bytes and the connections are bounded; a client that breaks a bound, sends a
// malformed frame or disconnects mid-request is dropped alone, and nothing it sends can
// end the controller.
// Threads: one accepting thread and one per connection (a blocking get or wait parks
// only its own connection). The public methods are for the owner's thread.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <list>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

#include "common/json/store_wire.h"

namespace chaosbench::harness {

class RendezvousServer {
 public:
  struct Limits {
    std::size_t max_keys = 100000;
    std::size_t max_bytes = std::size_t{256} << 20;  // keys and values together
    std::size_t max_connections = 1024;
    std::chrono::milliseconds hello_timeout{10000};  // for the token, after connecting
    int port = 0;  // where to listen; 0: an ephemeral port
  };

  // Listens and starts serving. Throws std::runtime_error when no socket can be had.
  explicit RendezvousServer(std::string token, Limits limits);
  explicit RendezvousServer(std::string token) : RendezvousServer(std::move(token), Limits{}) {}
  ~RendezvousServer();  // stop()
  RendezvousServer(const RendezvousServer&) = delete;
  RendezvousServer& operator=(const RendezvousServer&) = delete;

  int port() const { return port_; }
  // Closes every connection (blocked requests answer nothing) and joins the threads.
  // Idempotent.
  void stop();
  // Connections dropped for a wrong token, a broken bound or a malformed frame.
  std::size_t dropped() const { return dropped_.load(); }

 private:
  struct Connection {
    int fd = -1;
    std::thread thread;
    std::atomic<bool> done{false};
  };
  void accept_loop();
  void reap(bool all);
  void serve(Connection* c);
  bool authenticate(int fd);
  // The reply to one request; nullopt drops the connection (a protocol error).
  std::optional<common::store_wire::Message> handle(const common::store_wire::Message& request);
  common::store_wire::Message set(const std::string& key, const std::string& value, bool once);
  common::store_wire::Message get(const std::string& key, std::chrono::milliseconds timeout);
  common::store_wire::Message wait(const std::vector<std::string>& keys, std::chrono::milliseconds timeout);
  common::store_wire::Message list(const std::string& prefix);

  const std::string token_;
  const Limits limits_;
  int listen_fd_ = -1;
  int port_ = 0;
  std::atomic<bool> stopping_{false};
  std::atomic<std::size_t> dropped_{0};
  std::thread acceptor_;
  std::mutex connections_mutex_;
  std::list<std::unique_ptr<Connection>> connections_;

  std::mutex mutex_;  // guards data_ and bytes_
  std::condition_variable changed_;
  std::map<std::string, std::string> data_;
  std::size_t bytes_ = 0;
};

}  // namespace chaosbench::harness
