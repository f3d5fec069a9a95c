// The batching thread: wait for the first request, then for company until choose_batch
// says go (or the oldest request's max_queue_delay runs out), then one model call.
#include "bench/serve/dynamic_batcher.h"

#include <algorithm>
#include <cstring>
#include <stdexcept>

namespace chaosbench::bench::serve {

using Clock = std::chrono::steady_clock;

int choose_batch(const std::vector<int>& queued_rows, const BatcherConfig& cfg, bool delay_expired) {
  int fit = 0;
  int rows = 0;
  for (int r : queued_rows) {
    if (rows + r > cfg.max_batch_size) break;
    rows += r;
    ++fit;
  }
  if (fit == 0) return queued_rows.empty() ? 0 : 1;  // an oversized request goes alone
  int largest_preferred = 0;
  for (int p : cfg.preferred_batch_sizes)
    if (p <= cfg.max_batch_size) largest_preferred = std::max(largest_preferred, p);
  if (largest_preferred > 0 && rows >= largest_preferred) {
    // Triton: dispatch the largest preferred size the queue can form right away.
    int acc = 0;
    int best = 0;
    for (int i = 0; i < fit; ++i) {
      acc += queued_rows[static_cast<std::size_t>(i)];
      if (std::find(cfg.preferred_batch_sizes.begin(), cfg.preferred_batch_sizes.end(), acc) !=
          cfg.preferred_batch_sizes.end())
        best = i + 1;
    }
    return best > 0 ? best : fit;
  }
  const bool full = rows == cfg.max_batch_size || static_cast<std::size_t>(fit) < queued_rows.size();
  if (full || delay_expired || cfg.max_queue_delay.count() <= 0) return fit;
  return 0;
}

DynamicBatcher::DynamicBatcher(InferenceModel& model, BatcherConfig cfg, std::function<void(const BatchDone&)> on_batch)
    : model_(model), cfg_(std::move(cfg)), on_batch_(std::move(on_batch)) {
  if (cfg_.max_batch_size < 1 || cfg_.max_batch_size > model_.max_batch())
    throw std::invalid_argument("DynamicBatcher: max_batch_size must be in 1..model.max_batch()");
  if (cfg_.queue_limit < 1) throw std::invalid_argument("DynamicBatcher: queue_limit must be >= 1");
  x_.resize(static_cast<std::size_t>(cfg_.max_batch_size) * static_cast<std::size_t>(model_.input_dim()));
  y_.resize(static_cast<std::size_t>(cfg_.max_batch_size) * static_cast<std::size_t>(model_.output_dim()));
  thread_ = std::thread([this] { run(); });
}

DynamicBatcher::~DynamicBatcher() { stop(); }

bool DynamicBatcher::submit(std::vector<float> x, int rows, Completion done) {
  if (rows < 1 || rows > cfg_.max_batch_size ||
      x.size() != static_cast<std::size_t>(rows) * static_cast<std::size_t>(model_.input_dim()))
    throw std::invalid_argument("DynamicBatcher::submit: bad rows or input size");
  {
    std::lock_guard lk(mu_);
    if (stopping_ || queue_.size() >= static_cast<std::size_t>(cfg_.queue_limit)) return false;
    queue_.push_back(Pending{std::move(x), rows, std::move(done), Clock::now()});
  }
  cv_.notify_one();
  return true;
}

int DynamicBatcher::queue_depth() const {
  std::lock_guard lk(mu_);
  return static_cast<int>(queue_.size());
}

void DynamicBatcher::stop() {
  {
    std::lock_guard lk(mu_);
    stopping_ = true;
  }
  cv_.notify_all();
  if (thread_.joinable()) thread_.join();
}

void DynamicBatcher::run() {
  std::unique_lock lk(mu_);
  std::vector<int> rows;
  std::vector<Pending> batch;
  for (;;) {
    cv_.wait(lk, [&] { return stopping_ || !queue_.empty(); });
    if (queue_.empty()) return;  // stopping, and everything queued was served
    rows.clear();
    // One row per request at least, so no batch looks further than max_batch_size + 1.
    for (std::size_t i = 0; i < queue_.size() && rows.size() <= static_cast<std::size_t>(cfg_.max_batch_size); ++i)
      rows.push_back(queue_[i].rows);
    const auto deadline = queue_.front().enqueued + cfg_.max_queue_delay;
    const int n = choose_batch(rows, cfg_, stopping_ || Clock::now() >= deadline);
    if (n == 0) {
      cv_.wait_until(lk, deadline);
      continue;
    }
    batch.clear();
    for (int i = 0; i < n; ++i) {
      batch.push_back(std::move(queue_.front()));
      queue_.pop_front();
    }
    lk.unlock();
    execute(batch);
    lk.lock();
  }
}

void DynamicBatcher::execute(std::vector<Pending>& batch) {
  const auto start = Clock::now();
  BatchDone stats;
  stats.requests = static_cast<int>(batch.size());
  float* x = x_.data();
  for (auto& p : batch) {
    std::memcpy(x, p.x.data(), p.x.size() * sizeof(float));
    x += p.x.size();
    stats.rows += p.rows;
    stats.queue_ms.push_back(std::chrono::duration<double, std::milli>(start - p.enqueued).count());
  }
  std::string error;
  try {
    model_.infer(x_.data(), stats.rows, y_.data());
  } catch (const std::exception& e) {
    error = std::string("inference failed: ") + e.what();
  }
  if (on_batch_) on_batch_(stats);
  const auto out_dim = static_cast<std::size_t>(model_.output_dim());
  const float* y = y_.data();
  for (auto& p : batch) {
    const std::size_t n = static_cast<std::size_t>(p.rows) * out_dim;
    if (error.empty())
      p.done(std::vector<float>(y, y + n), error);
    else
      p.done({}, error);
    y += n;
  }
}

}  // namespace chaosbench::bench::serve
