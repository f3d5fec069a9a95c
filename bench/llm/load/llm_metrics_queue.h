// Hands the LLM load generator's records to a writer thread that sends them through the
// MetricsClient, so the loop thread, which timestamps stream bytes, never blocks on the
// harness's socket (MetricsClient writes whole buffers, blocking, when they fill).
// Each record keeps the wall time of its sample() or event() call.
// Threads: sample(), event() and flush() from one producer thread (the loop); the writer
// thread is the MetricsClient's only user from construction to destruction, so the owner
// must not use that client meanwhile. Destruction writes what is queued, flushes and joins.
// Bounded: a harness that stops reading cannot make the queue grow without limit; past
// kMaxQueued samples wait, new samples are dropped (events never are) and counted, and
// the writer reports the count as the event llm_metrics_dropped {count}.
#pragma once

#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <mutex>
#include <string_view>
#include <thread>
#include <vector>

#include "bench/protocol/metrics_client.h"

namespace chaosbench::bench::llm {

class LlmMetricsQueue {
 public:
  explicit LlmMetricsQueue(MetricsClient& metrics);
  ~LlmMetricsQueue();
  LlmMetricsQueue(const LlmMetricsQueue&) = delete;
  LlmMetricsQueue& operator=(const LlmMetricsQueue&) = delete;

  void sample(std::string_view name, double value, std::string_view unit, Labels labels = {});
  void event(std::string_view name, Labels fields = {});
  // Asks the writer to send what is queued now (it also does every 100 ms). Never blocks
  // but for the queue's lock.
  void flush();

 private:
  void write_loop();

  MetricsClient& metrics_;
  const bool connected_;  // not connected: every call is a no-op, no thread
  std::mutex mutex_;
  std::condition_variable wake_;
  static constexpr std::size_t kMaxQueued = 1'000'000;
  std::vector<Record> queued_;
  std::uint64_t dropped_ = 0;  // samples not queued (the queue was full), not yet reported
  bool flush_asked_ = false;
  bool stop_ = false;
  std::thread writer_;
};

}  // namespace chaosbench::bench::llm
