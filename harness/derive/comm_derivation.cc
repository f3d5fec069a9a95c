#include "harness/derive/comm_derivation.h"

#include <map>
#include <tuple>

#include "bench/collective/collective_kind.h"
#include "harness/derive/aggregator.h"
#include "reports/model/text_format.h"

namespace chaosbench::harness {
namespace {

reports::MetricRecord record(const char* name, const char* unit, common::Better better, const reports::Labels& labels,
                             double value, std::optional<reports::Stats> stats) {
  return reports::MetricRecord{name, unit, better, labels, value, stats};
}

}  // namespace

std::vector<reports::MetricRecord> derive_comm_records(const reports::Labels& labels,
                                                       const std::vector<double>& latency_us) {
  std::vector<reports::MetricRecord> out;
  auto bytes = reports::label_number(labels, "bytes");
  auto ranks = reports::label_number(labels, "ranks");
  const auto* info = bench::find_collective(reports::label_value(labels, "collective"));
  if (!bytes || !ranks || !info || latency_us.empty()) return out;
  const double factor = bench::bus_bandwidth_factor(info->kind, static_cast<int>(*ranks));
  auto lat = compute_stats(latency_us);
  if (lat.mean <= 0) return out;
  // GB/s = 10^9 bytes per second; latency is in microseconds.
  auto gbps = [&](double us) { return us > 0 ? *bytes / (us * 1e-6) / 1e9 : 0.0; };
  std::vector<double> alg;
  alg.reserve(latency_us.size());
  for (double us : latency_us) alg.push_back(gbps(us));
  auto alg_stats = compute_stats(alg);
  const double algbw = gbps(lat.mean);  // bytes / mean time, not the mean of rates
  alg_stats.mean = algbw;
  auto bus_stats = alg_stats;
  for (double* f : {&bus_stats.mean, &bus_stats.stddev, &bus_stats.min, &bus_stats.p50, &bus_stats.p90,
                    &bus_stats.p99, &bus_stats.max, &bus_stats.sum})
    *f *= factor;
  out.push_back(record("comm/algbw", "GB/s", common::Better::kHigher, labels, algbw, alg_stats));
  out.push_back(record("comm/busbw", "GB/s", common::Better::kHigher, labels, algbw * factor, bus_stats));
  out.push_back(record("comm/iter_cv", "%", common::Better::kLower, labels, 100.0 * lat.stddev / lat.mean, std::nullopt));
  return out;
}

std::vector<reports::MetricRecord> derive_avg_busbw(const std::vector<reports::MetricRecord>& records) {
  using Key = std::tuple<std::string, std::string, std::string, std::string>;
  std::map<Key, std::pair<reports::Labels, std::vector<double>>> groups;
  for (const auto& r : records) {
    if (r.name != "comm/busbw") continue;
    Key key{reports::label_value(r.labels, "phase"), reports::label_value(r.labels, "collective"),
            reports::label_value(r.labels, "algorithm"), reports::label_value(r.labels, "ranks")};
    auto& g = groups[key];
    if (g.second.empty()) {
      g.first = r.labels;
      g.first.erase("bytes");
    }
    g.second.push_back(r.value);
  }
  std::vector<reports::MetricRecord> out;
  for (auto& [key, g] : groups) {
    auto stats = compute_stats(g.second);
    out.push_back(record("comm/avg_busbw", "GB/s", common::Better::kHigher, g.first, stats.mean, stats));
  }
  return out;
}

}  // namespace chaosbench::harness
