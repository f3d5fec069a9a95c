#include "bench/llm/load/llm_load_recorder.h"

#include <algorithm>

#include "bench/llm/load/length_sampler.h"

namespace chaosbench::bench::llm {
namespace {

constexpr auto kAdaptEvery = std::chrono::milliseconds(100);
constexpr std::size_t kItlKeep = std::size_t{1} << 21;  // whole up to here, then a reservoir

}  // namespace

LlmLoadRecorder::LlmLoadRecorder(LlmMetricsQueue& metrics, LlmRecorderOptions options, Clock::time_point start)
    : metrics_(metrics),
      options_(options),
      start_(start),
      window_end_(start + std::chrono::duration_cast<Clock::duration>(options.window)),
      next_adapt_(start + kAdaptEvery),
      window_tally_(options.slo),
      total_tally_(options.slo),
      rng_(options.seed ^ 0x9e3779b97f4a7c15ull) {}

void LlmLoadRecorder::finished(const StreamTiming& t, Clock::time_point) {
  window_tally_.add(t);
  if (total_tally_.add(t).attained()) ++result_.attained;
  if (!t.ok()) {  // a failed request's tokens are not output (as vLLM's benchmark counts)
    ++result_.failed;
    ++window_.failed;
    const std::string reason(to_string(t.failure));
    ++result_.failures[reason];
    ++window_.failures[reason];
    return;
  }
  ++result_.completed;
  ++window_.completed;
  result_.output_tokens += t.output_tokens;
  window_.tokens += t.output_tokens;
  result_.token_chunks += t.counted_tokens;
  if (t.ttft) result_.ttft_ms.push_back(StreamTiming::ms(*t.ttft));
  result_.e2e_ms.push_back(StreamTiming::ms(t.e2e));
  if (t.send_lag) result_.send_lag_ms.push_back(StreamTiming::ms(*t.send_lag));
  if (t.first_byte) result_.first_byte_ms.push_back(StreamTiming::ms(*t.first_byte));
  if (options_.stream && t.tpot) result_.tpot_ms.push_back(StreamTiming::ms(*t.tpot));
  if (options_.send_samples) {
    if (t.ttft) metrics_.sample("infer/ttft", StreamTiming::ms(*t.ttft), "ms");
    if (options_.stream && t.tpot) metrics_.sample("infer/tpot", StreamTiming::ms(*t.tpot), "ms");
    metrics_.sample("infer/e2e_latency", StreamTiming::ms(t.e2e), "ms");
  }
  if (options_.stream) record_itl(t);
}

void LlmLoadRecorder::record_itl(const StreamTiming& t) {
  for (const auto gap : t.itl) {
    const double ms = StreamTiming::ms(gap);
    ++result_.itl_gaps;
    ++window_.itl_gaps;
    ++recent_gaps_;
    keep_itl(ms);
    if (!options_.send_samples) continue;
    if (itl_probability_ < 1 && LengthSampler::uniform01(rng_) >= itl_probability_) continue;
    metrics_.sample("infer/itl", ms, "ms");
    ++result_.itl_sent;
    ++window_.itl_sent;
  }
}

void LlmLoadRecorder::keep_itl(double ms) {
  auto& kept = result_.itl_ms;
  if (kept.size() < kItlKeep) {
    kept.push_back(ms);
    return;
  }
  // Algorithm R (Vitter 1985): every gap seen so far is kept with the same probability.
  const auto seen = static_cast<std::uint64_t>(result_.itl_gaps);
  const auto slot = std::uniform_int_distribution<std::uint64_t>(0, seen - 1)(rng_);
  if (slot < kept.size()) kept[slot] = ms;
}

void LlmLoadRecorder::tick(Clock::time_point now) {
  while (now >= next_adapt_) {
    const double budget = options_.itl_budget_per_s * std::chrono::duration<double>(kAdaptEvery).count();
    itl_probability_ = recent_gaps_ > budget ? budget / static_cast<double>(recent_gaps_) : 1.0;
    recent_gaps_ = 0;
    next_adapt_ += kAdaptEvery;
  }
  while (now >= window_end_) {
    close_window(std::chrono::duration<double>(options_.window).count());
    window_end_ += std::chrono::duration_cast<Clock::duration>(options_.window);
  }
}

void LlmLoadRecorder::close_window(double length_s) {
  const auto& w = window_;
  if (options_.send_samples && length_s > 0) {
    const auto finished = w.completed + w.failed;
    metrics_.sample("infer/output_tokens_per_s", static_cast<double>(w.tokens) / length_s, "tok/s");
    metrics_.sample("infer/request_goodput", window_tally_.request_goodput(length_s), "req/s");
    if (auto a = window_tally_.slo_attainment()) metrics_.sample("infer/slo_attainment", *a, "%");
    metrics_.sample("infer/throughput", static_cast<double>(w.completed) / length_s, "req/s");
    metrics_.sample("infer/error_rate", finished > 0 ? 100.0 * static_cast<double>(w.failed) / static_cast<double>(finished) : 0.0, "%");
    for (const auto& [reason, n] : w.failures)
      metrics_.sample("infer/failed_streams", static_cast<double>(n), "count", {{"reason", reason}});
    if (w.itl_sent < w.itl_gaps)
      metrics_.event("llm_itl_sampling", {{"gaps", w.itl_gaps}, {"sent", w.itl_sent},
                                          {"fraction", static_cast<double>(w.itl_sent) / static_cast<double>(w.itl_gaps)}});
    metrics_.flush();
  }
  window_ = {};
  window_tally_.clear();
}

LlmLoadResult LlmLoadRecorder::finish(Clock::time_point now) {
  const double partial = std::chrono::duration<double>(now - (window_end_ - std::chrono::duration_cast<Clock::duration>(options_.window))).count();
  if (partial > 0.001) close_window(partial);
  result_.elapsed_s = std::chrono::duration<double>(now - start_).count();
  if (options_.send_samples) {
    for (const auto& [reason, n] : result_.failures) metrics_.event("llm_failures", {{"reason", reason}, {"count", n}});
    metrics_.flush();
  }
  return result_;
}

}  // namespace chaosbench::bench::llm
