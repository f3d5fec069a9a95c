// The harness's end of the metrics wire protocol: a Unix stream socket that any number of
// ranks connect to and write newline-delimited JSON records into (bench/protocol/record.h).
// Pathname sockets work across network namespaces, so ranks in namespaces reach it too.
//
// Threads: one background thread accepts and reads; the callbacks run on it. Records of
// one connection arrive in order. Malformed lines are counted, never fatal. What a rank
// wrote before it died is delivered.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "bench/protocol/record.h"

namespace chaosbench::harness {

class MetricsServer {
 public:
  // Called for every well-formed record, with the harness's receive time (Unix seconds).
  using RecordHandler = std::function<void(const bench::Record&, double received_at)>;

  // Binds and listens on `socket_path` (which must not exist) and starts the thread.
  // Throws std::runtime_error on failure.
  MetricsServer(std::string socket_path, RecordHandler on_record);
  ~MetricsServer();  // stop()
  MetricsServer(const MetricsServer&) = delete;
  MetricsServer& operator=(const MetricsServer&) = delete;

  // "unix:<path>", the value of CHAOSBENCH_METRICS for workloads.
  std::string address() const;

  // Reads what connected clients already wrote (until every open connection has been
  // idle for `drain_idle`, or has closed), then stops the thread, closes every socket and
  // unlinks the socket file. Idempotent.
  void stop(std::chrono::milliseconds drain_idle = std::chrono::milliseconds(200));

  std::uint64_t records() const { return records_.load(); }
  std::uint64_t malformed() const { return malformed_.load(); }
  // The first few malformed lines (truncated to 200 bytes) with the reason.
  std::vector<std::string> malformed_examples() const;

 private:
  void loop();

  std::string path_;
  RecordHandler on_record_;
  int listen_fd_ = -1;
  int wake_fd_ = -1;  // eventfd that stop() uses to wake the loop
  std::thread thread_;
  std::atomic<bool> stopping_{false};
  std::atomic<std::uint64_t> records_{0};
  std::atomic<std::uint64_t> malformed_{0};
  mutable std::mutex examples_mutex_;
  std::vector<std::string> examples_;
};

}  // namespace chaosbench::harness
