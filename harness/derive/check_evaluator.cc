#include "harness/derive/check_evaluator.h"

#include <fmt/format.h>

#include "harness/derive/aggregator.h"

namespace chaosbench::harness {
namespace {

bool label_equal(const reports::LabelValue& a, const reports::LabelValue& b) {
  // 16777216 written in a check matches the integer label; 0.5 matches 0.5.
  auto as_double = [](const reports::LabelValue& v) -> std::optional<double> {
    if (const auto* i = std::get_if<std::int64_t>(&v)) return static_cast<double>(*i);
    if (const auto* d = std::get_if<double>(&v)) return *d;
    return std::nullopt;
  };
  auto da = as_double(a), db = as_double(b);
  if (da && db) return *da == *db;
  return reports::label_to_string(a) == reports::label_to_string(b);
}

std::optional<double> pick(const reports::MetricRecord& r, const std::string& stat) {
  if (stat == "value") return r.value;
  if (!r.stats) return std::nullopt;
  const auto& s = *r.stats;
  if (stat == "mean") return s.mean;
  if (stat == "min") return s.min;
  if (stat == "max") return s.max;
  if (stat == "p50") return s.p50;
  if (stat == "p90") return s.p90;
  if (stat == "p99") return s.p99;
  return std::nullopt;
}

std::string describe_labels(const reports::Labels& labels) {
  std::string out;
  for (const auto& [k, v] : labels) out += fmt::format("{}{}={}", out.empty() ? "" : ", ", k, reports::label_to_string(v));
  return out;
}

}  // namespace

std::vector<reports::CheckResult> evaluate_checks(const std::vector<CheckSpec>& checks,
                                                  const std::vector<reports::MetricRecord>& records) {
  std::vector<reports::CheckResult> out;
  for (const auto& c : checks) {
    reports::Labels wanted = to_report_labels(c.labels);
    wanted["phase"] = c.phase;
    // A check with both bounds yields two results, one per bound, each with its worst record.
    std::vector<std::pair<std::string, double>> bounds;
    if (c.min) bounds.emplace_back(">=", *c.min);
    if (c.max) bounds.emplace_back("<=", *c.max);
    for (const auto& [op, threshold] : bounds) {
      reports::CheckResult res;
      res.metric = c.metric;
      res.op = op;
      res.threshold = threshold;
      res.labels = wanted;
      std::size_t matched = 0;
      const reports::MetricRecord* worst = nullptr;
      std::optional<double> worst_value;
      for (const auto& r : records) {
        if (r.name != c.metric) continue;
        bool match = true;
        for (const auto& [k, v] : wanted) {
          auto it = r.labels.find(k);
          if (it == r.labels.end() || !label_equal(it->second, v)) {
            match = false;
            break;
          }
        }
        if (!match) continue;
        auto v = pick(r, c.stat);
        if (!v) continue;
        ++matched;
        bool worse = !worst_value || (op == ">=" ? *v < *worst_value : *v > *worst_value);
        if (worse) {
          worst_value = v;
          worst = &r;
        }
      }
      if (!worst) {
        res.status = reports::CheckStatus::kFail;
        res.message = fmt::format("no record of {} with {}", c.metric, describe_labels(wanted));
      } else {
        res.value = worst_value;
        res.labels = worst->labels;
        bool pass = op == ">=" ? *worst_value >= threshold : *worst_value <= threshold;
        res.status = pass ? reports::CheckStatus::kPass : reports::CheckStatus::kFail;
        res.message = fmt::format("{} {} = {:.6g}{}{} (worst of {} record{}){}", c.metric, c.stat, *worst_value,
                                  worst->unit.empty() ? "" : " ", worst->unit, matched, matched == 1 ? "" : "s",
                                  pass ? "" : fmt::format("; limit {} {:.6g}", op, threshold));
      }
      out.push_back(std::move(res));
    }
  }
  return out;
}

}  // namespace chaosbench::harness
