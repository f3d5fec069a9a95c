// One connection to the controller's rendezvous store ("tcp:HOST:PORT";
// harness/site/rendezvous_server.h, common/json/store_wire.h): the token first, then one
// request at a time. What gloo's store adaptor and the elastic membership build on.
// Threads: any; a mutex keeps requests whole (a blocking get holds it while it waits).
#pragma once

#include <chrono>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "common/json/store_wire.h"

namespace chaosbench::bench {

class TcpStoreClient {
 public:
  // Connects, retrying refused connections until `connect_timeout` (a moment's loss of
  // the route to the controller), and authenticates. Throws std::runtime_error: no connection, or
  // the token refused.
  TcpStoreClient(const std::string& host, int port, const std::string& token,
                 std::chrono::milliseconds connect_timeout = std::chrono::seconds(5));
  ~TcpStoreClient();
  TcpStoreClient(const TcpStoreClient&) = delete;
  TcpStoreClient& operator=(const TcpStoreClient&) = delete;

  // Each throws std::runtime_error when the connection breaks or the server refuses (a
  // bound: key or value size, the store full).
  void set(const std::string& key, const std::string& value);
  // Blocks until the key exists; nullopt after `timeout`.
  std::optional<std::string> get(const std::string& key, std::chrono::milliseconds timeout);
  // Blocks until every key exists; false after `timeout`.
  bool wait(const std::vector<std::string>& keys, std::chrono::milliseconds timeout);
  // Sets the key unless it exists; either way returns the value it holds (the first wins).
  std::string add_once(const std::string& key, const std::string& value);
  void remove(const std::string& key);
  // Every key starting with `prefix`, with its value.
  std::map<std::string, std::string> list(const std::string& prefix);

 private:
  common::store_wire::Message call(const common::store_wire::Message& request);

  std::string where_;  // "HOST:PORT", for messages
  int fd_ = -1;
  std::mutex mutex_;
};

}  // namespace chaosbench::bench
