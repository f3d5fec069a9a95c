// The lock-free latency histogram. See latency_histogram.h.
#include "bench/llm/serve/latency_histogram.h"

#include <fmt/format.h>

#include <algorithm>

namespace chaosbench::bench::llm {

LatencyHistogram::LatencyHistogram(std::vector<double> bounds)
    : bounds_(std::move(bounds)), buckets_(std::make_unique<std::atomic<std::uint64_t>[]>(bounds_.size() + 1)) {}

void LatencyHistogram::observe(double seconds) {
  seconds = std::max(0.0, seconds);
  const auto i = static_cast<std::size_t>(std::lower_bound(bounds_.begin(), bounds_.end(), seconds) - bounds_.begin());
  buckets_[i].fetch_add(1);
  sum_ns_.fetch_add(static_cast<std::uint64_t>(seconds * 1e9));
  count_.fetch_add(1);
}

std::string LatencyHistogram::text(const char* name, const char* help, const std::string& model) const {
  std::string out = fmt::format("# HELP {} {}\n# TYPE {} histogram\n", name, help, name);
  std::uint64_t cumulative = 0;
  for (std::size_t i = 0; i <= bounds_.size(); ++i) {
    cumulative += buckets_[i].load();
    const std::string le = i < bounds_.size() ? fmt::format("{}", bounds_[i]) : "+Inf";
    out += fmt::format("{}_bucket{{model_name=\"{}\",le=\"{}\"}} {}\n", name, model, le, cumulative);
  }
  out += fmt::format("{}_sum{{model_name=\"{}\"}} {}\n", name, model, static_cast<double>(sum_ns_.load()) / 1e9);
  out += fmt::format("{}_count{{model_name=\"{}\"}} {}\n", name, model, count_.load());
  return out;
}

std::vector<double> LatencyHistogram::ttft_bounds() {
  return {0.001, 0.005, 0.01, 0.02, 0.04, 0.06, 0.08, 0.1, 0.25, 0.5, 0.75, 1.0, 2.5, 5.0, 7.5, 10.0, 20.0, 40.0, 80.0,
          160.0, 640.0, 2560.0};
}

std::vector<double> LatencyHistogram::tpot_bounds() {
  return {0.01, 0.025, 0.05, 0.075, 0.1, 0.15, 0.2, 0.3, 0.4, 0.5, 0.75, 1.0, 2.5, 5.0, 7.5, 10.0, 20.0, 40.0, 80.0};
}

}  // namespace chaosbench::bench::llm
