// The dynamic batcher, with Triton's knobs (max_batch_size, preferred_batch_size,
// max_queue_delay_microseconds): requests queue FIFO; one batching thread concatenates
// whole requests into a batch, calls InferenceModel::infer once and hands each request its
// own rows. Past queue_limit waiting requests submit() refuses at once (the server's 503),
// so memory stays bounded.
// Threads: submit() from any thread; completions run on the batching thread and must not
// block.
#pragma once

#include <chrono>
#include <condition_variable>
#include <deque>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

#include "bench/serve/inference_model.h"

namespace chaosbench::bench::serve {

struct BatcherConfig {
  int max_batch_size = 64;                       // rows per model call
  std::chrono::microseconds max_queue_delay{0};  // how long the oldest request may wait for company
  std::vector<int> preferred_batch_sizes;        // dispatch at once on reaching the largest
  int queue_limit = 1024;                        // waiting requests before submit() refuses
};

// Statistics of one executed batch, for metrics.
struct BatchDone {
  int requests = 0;
  int rows = 0;
  std::vector<double> queue_ms;  // per request: enqueue to batch start
};

// How many of the queued requests (rows of each, oldest first) to dispatch now; 0 = wait.
// Pure, so the policy is testable without threads: dispatch when the FIFO prefix that fits
// in max_batch_size is full (or the next request would not fit), when it reaches the
// largest preferred size (cut at the largest preferred boundary), or when the oldest
// request's delay has expired.
int choose_batch(const std::vector<int>& queued_rows, const BatcherConfig& cfg, bool delay_expired);

class DynamicBatcher {
 public:
  // y: rows x output_dim, or empty with `error` set when the model threw.
  using Completion = std::function<void(std::vector<float> y, const std::string& error)>;

  // model.max_batch() must be >= cfg.max_batch_size. Starts the batching thread.
  DynamicBatcher(InferenceModel& model, BatcherConfig cfg, std::function<void(const BatchDone&)> on_batch = {});
  ~DynamicBatcher();  // stop()
  DynamicBatcher(const DynamicBatcher&) = delete;
  DynamicBatcher& operator=(const DynamicBatcher&) = delete;

  // Queues x (rows x input_dim, 1 <= rows <= max_batch_size); false when the queue is
  // full or the batcher stopped (done is then never called). Never blocks on the model.
  bool submit(std::vector<float> x, int rows, Completion done);
  int queue_depth() const;
  const BatcherConfig& config() const { return cfg_; }
  // Finishes the queued requests, then joins the thread. Idempotent.
  void stop();

 private:
  struct Pending {
    std::vector<float> x;
    int rows = 0;
    Completion done;
    std::chrono::steady_clock::time_point enqueued;
  };
  void run();
  void execute(std::vector<Pending>& batch);

  InferenceModel& model_;
  BatcherConfig cfg_;
  std::function<void(const BatchDone&)> on_batch_;
  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::deque<Pending> queue_;
  bool stopping_ = false;
  std::vector<float> x_, y_;
  std::thread thread_;
};

}  // namespace chaosbench::bench::serve
