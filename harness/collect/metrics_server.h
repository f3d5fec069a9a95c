// The harness's end of the metrics wire protocol: a Unix stream socket that any number of
// ranks connect to and write newline-delimited JSON records into (bench/protocol/record.h).
// Pathname sockets work across network namespaces, so ranks in namespaces reach it too.
//
// Threads: one background thread accepts and reads; the callbacks run on it. Records of
// one connection arrive in order. Malformed lines are counted, never fatal. What a rank
// wrote before it died is delivered. A line longer than 1 MiB is malformed and skipped up
// to its newline; a last line without newline is decoded at EOF; blank lines are ignored.
// A rank's records past max_records_per_rank (over all its connections) are counted
// malformed and dropped, so one runaway rank cannot grow the harness without bound.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "bench/protocol/record.h"

namespace chaosbench::harness {

class MetricsServer {
 public:
  // Called for every well-formed record, with the harness's receive time (Unix seconds),
  // on the server thread: it must not call stop(). An exception it throws is logged and
  // the record still counts.
  using RecordHandler = std::function<void(const bench::Record&, double received_at)>;

  // Binds and listens on `socket_path` (which must not exist) and starts the thread.
  // Throws std::runtime_error on failure. The socket file is mode 0600 whatever the umask:
  // ranks run as the harness's user.
  static constexpr std::uint64_t kDefaultMaxRecordsPerRank = 100'000'000;
  MetricsServer(std::string socket_path, RecordHandler on_record,
                std::uint64_t max_records_per_rank = kDefaultMaxRecordsPerRank);
  // Pass-through: every non-blank line, undecoded (no per-rank limit, nothing malformed
  // here), for a relay that forwards lines to a decoder elsewhere (an agent forwards its
  // ranks' lines to the controller, which decodes and judges them once).
  using LineHandler = std::function<void(std::string_view line, double received_at)>;
  static std::unique_ptr<MetricsServer> relay(std::string socket_path, LineHandler on_line);
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
  // The first few malformed lines (truncated to 200 bytes) with the reason:
  // rank 3 line 17: not valid JSON: {"type":... ("connection 2" while the connection
  // has sent no good record yet). Bytes outside printable ASCII are shown as \xNN.
  std::vector<std::string> malformed_examples() const;

 private:
  MetricsServer(std::string socket_path, RecordHandler on_record, LineHandler on_line, std::uint64_t max_records_per_rank);

  struct Connection;  // one accepted socket and its partial line; lives on the thread

  void loop();
  // false: accepting failed for want of resources (EMFILE...); the loop pauses it.
  bool accept_all(std::vector<Connection>& connections, std::uint64_t& next_id);
  bool read_connection(Connection& c);  // false once it closed
  void consume(Connection& c, const char* data, std::size_t size, double received_at);
  void finish_connection(Connection& c, double received_at);
  void handle_line(Connection& c, std::string_view line, double received_at);
  void count_malformed(const Connection& c, std::string_view reason, std::string_view line);
  void close_fds() noexcept;

  std::string path_;
  RecordHandler on_record_;
  LineHandler on_line_;  // set: pass-through (on_record_ unused)
  std::uint64_t max_records_;
  std::map<int, std::uint64_t> records_by_rank_;  // server thread only; ranks are < 2^20
  int listen_fd_ = -1;
  int wake_fd_ = -1;  // eventfd that stop() uses to wake the loop
  bool bound_ = false;  // the socket file is ours to unlink
  std::thread thread_;
  std::mutex stop_mutex_;  // makes stop() idempotent when called from two threads
  std::atomic<bool> stopping_{false};
  std::atomic<std::int64_t> drain_idle_ms_{200};
  std::atomic<std::uint64_t> records_{0};
  std::atomic<std::uint64_t> malformed_{0};
  mutable std::mutex examples_mutex_;
  std::vector<std::string> examples_;
  std::uint64_t handler_failures_ = 0;  // thread only: the first one is logged
};

}  // namespace chaosbench::harness
