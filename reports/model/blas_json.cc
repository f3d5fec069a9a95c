#include "reports/blas_json.h"

#include <cmath>

namespace chaosbench::reports {
namespace {

using nlohmann::ordered_json;

ordered_json number(double v) { return std::isfinite(v) ? ordered_json(v) : ordered_json(nullptr); }

std::string text(const nlohmann::json& j, const char* key) {
  auto it = j.find(key);
  return it != j.end() && it->is_string() ? it->get<std::string>() : std::string();
}

double real(const nlohmann::json& j, const char* key) {
  auto it = j.find(key);
  return it != j.end() && it->is_number() ? it->get<double>() : 0.0;
}

bool flag(const nlohmann::json& j, const char* key) {
  auto it = j.find(key);
  return it != j.end() && it->is_boolean() && it->get<bool>();
}

}  // namespace

ordered_json cpu_peak_json(const CpuPeakRecord& c) {
  return {{"known", c.known},           {"isa", c.isa},
          {"lanes", c.lanes},           {"fma_units", c.fma_units},
          {"clock_ghz", number(c.clock_ghz)}, {"nominal_ghz", number(c.nominal_ghz)},
          {"fma_gflops", number(c.fma_gflops)}, {"peak_gflops", number(c.peak_gflops)}};
}

CpuPeakRecord cpu_peak_from_json(const nlohmann::json& j) {
  CpuPeakRecord c;
  if (!j.is_object()) return c;
  c.isa = text(j, "isa");
  c.lanes = static_cast<int>(real(j, "lanes"));
  c.fma_units = static_cast<int>(real(j, "fma_units"));
  c.clock_ghz = real(j, "clock_ghz");
  c.nominal_ghz = real(j, "nominal_ghz");
  c.fma_gflops = real(j, "fma_gflops");
  c.peak_gflops = real(j, "peak_gflops");
  // The probe's own line has no "known": a peak is known when it has one.
  c.known = j.contains("known") ? flag(j, "known") : c.peak_gflops > 0;
  return c;
}

ordered_json blas_json(const BlasRecord& b) {
  ordered_json candidates = ordered_json::array();
  for (const auto& c : b.candidates)
    candidates.push_back({{"name", c.name},
                          {"corename", c.corename},
                          {"gflops", number(c.gflops)},
                          {"max_error", number(c.max_error)},
                          {"correct", c.correct},
                          {"problem", c.problem}});
  return {{"library", b.library},
          {"detected", b.detected},
          {"detected_gflops", number(b.detected_gflops)},
          {"chosen", b.chosen},
          {"chosen_gflops", number(b.chosen_gflops)},
          {"best", b.best},
          {"best_gflops", number(b.best_gflops)},
          {"source", b.source},
          {"reason", b.reason},
          {"probed_at", b.probed_at},
          {"candidates", candidates},
          {"cpu", cpu_peak_json(b.cpu)}};
}

BlasCandidateRecord blas_candidate_from_json(const nlohmann::json& j) {
  if (!j.is_object()) return {};
  return {text(j, "name"), text(j, "corename"), real(j, "gflops"), real(j, "max_error"), flag(j, "correct"),
          text(j, "problem")};
}

BlasRecord blas_from_json(const nlohmann::json& j) {
  BlasRecord b;
  if (!j.is_object()) return b;
  b.library = text(j, "library");
  b.detected = text(j, "detected");
  b.detected_gflops = real(j, "detected_gflops");
  b.chosen = text(j, "chosen");
  b.chosen_gflops = real(j, "chosen_gflops");
  b.best = text(j, "best");
  b.best_gflops = real(j, "best_gflops");
  b.source = text(j, "source");
  b.reason = text(j, "reason");
  b.probed_at = text(j, "probed_at");
  if (auto it = j.find("candidates"); it != j.end() && it->is_array())
    for (const auto& c : *it)
      if (c.is_object()) b.candidates.push_back(blas_candidate_from_json(c));
  if (auto it = j.find("cpu"); it != j.end()) b.cpu = cpu_peak_from_json(*it);
  return b;
}

}  // namespace chaosbench::reports
