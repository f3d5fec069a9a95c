#include "bench/load/load_recorder.h"

#include "bench/protocol/record.h"

namespace chaosbench::bench::load {
namespace {

constexpr auto kFlushEvery = std::chrono::milliseconds(100);

}  // namespace

LoadRecorder::LoadRecorder(MetricsClient& metrics, Clock::time_point start, bool keep_requests,
                           std::chrono::milliseconds window)
    : metrics_(metrics), window_length_(window), start_(start), keep_requests_(keep_requests), window_end_(start + window),
      next_flush_(start + kFlushEvery) {
  all_latencies_.reserve(1 << 16);
}

void LoadRecorder::completed(Clock::time_point scheduled, Clock::time_point now) {
  const auto ms = static_cast<float>(std::chrono::duration<double, std::milli>(now - scheduled).count());
  ++result_.completed;
  ++window_.completed;
  all_latencies_.push_back(ms);
  window_latencies_.push_back(ms);
  if (metrics_.connected()) unsent_latencies_.push_back(ms);
  if (keep_requests_) result_.requests.push_back({since_start(scheduled), ms, true});
}

void LoadRecorder::failed(Clock::time_point scheduled, Clock::time_point now) {
  ++result_.errors;
  ++window_.errors;
  if (keep_requests_) {
    const auto ms = static_cast<float>(std::chrono::duration<double, std::milli>(now - scheduled).count());
    result_.requests.push_back({since_start(scheduled), ms, false});
  }
}

void LoadRecorder::close_window(double length_s) {
  window_.latency = summarize_latencies(window_latencies_);
  window_latencies_.clear();
  if (metrics_.connected() && length_s > 0) {
    metrics_.sample("infer/throughput", static_cast<double>(window_.completed) / length_s, "req/s");
    metrics_.sample("infer/error_rate", window_.error_rate(), "%");
  }
  result_.windows.push_back(window_);
  window_ = LoadWindow{};
  window_.start_s = static_cast<double>(result_.windows.size()) * std::chrono::duration<double>(window_length_).count();
}

void LoadRecorder::tick(Clock::time_point now) {
  if (now < next_flush_) return;
  next_flush_ = now + kFlushEvery;
  while (now >= window_end_) {
    close_window(std::chrono::duration<double>(window_length_).count());
    window_end_ += window_length_;
  }
  if (!metrics_.connected()) return;
  const double t = wall_time_now();
  for (float ms : unsent_latencies_) metrics_.sample("infer/latency", ms, "ms", {}, t);
  unsent_latencies_.clear();
  metrics_.flush();
}

LoadResult LoadRecorder::finish(Clock::time_point now) {
  next_flush_ = now;
  tick(now);
  const double partial = std::chrono::duration<double>(now - (window_end_ - window_length_)).count();
  if (window_.completed + window_.errors > 0 || result_.windows.empty()) close_window(partial);
  metrics_.flush();
  result_.duration_s = since_start(now);
  result_.latency = summarize_latencies(all_latencies_);
  return std::move(result_);
}

}  // namespace chaosbench::bench::load
