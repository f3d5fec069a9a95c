#include "reports/model/blas_json.h"

#include <cmath>

#include "common/json/json_values.h"

namespace chaosbench::reports {
namespace {

using nlohmann::ordered_json;
using common::json_finite;
using common::json_flag;
using common::json_number;
using common::json_text;

}  // namespace

ordered_json cpu_peak_json(const CpuPeakRecord& c) {
  return {{"known", c.known},           {"isa", c.isa},
          {"lanes", c.lanes},           {"fma_units", c.fma_units},
          {"clock_ghz", json_finite(c.clock_ghz)}, {"nominal_ghz", json_finite(c.nominal_ghz)},
          {"fma_gflops", json_finite(c.fma_gflops)}, {"peak_gflops", json_finite(c.peak_gflops)}};
}

CpuPeakRecord cpu_peak_from_json(const nlohmann::json& j) {
  CpuPeakRecord c;
  if (!j.is_object()) return c;
  c.isa = json_text(j, "isa");
  c.lanes = static_cast<int>(json_number(j, "lanes"));
  c.fma_units = static_cast<int>(json_number(j, "fma_units"));
  c.clock_ghz = json_number(j, "clock_ghz");
  c.nominal_ghz = json_number(j, "nominal_ghz");
  c.fma_gflops = json_number(j, "fma_gflops");
  c.peak_gflops = json_number(j, "peak_gflops");
  // The probe's own line has no "known": a peak is known when it has one.
  c.known = j.contains("known") ? json_flag(j, "known") : c.peak_gflops > 0;
  return c;
}

ordered_json blas_json(const BlasRecord& b) {
  ordered_json candidates = ordered_json::array();
  for (const auto& c : b.candidates)
    candidates.push_back({{"name", c.name},
                          {"corename", c.corename},
                          {"gflops", json_finite(c.gflops)},
                          {"max_error", json_finite(c.max_error)},
                          {"correct", c.correct},
                          {"problem", c.problem}});
  return {{"library", b.library},
          {"detected", b.detected},
          {"detected_gflops", json_finite(b.detected_gflops)},
          {"chosen", b.chosen},
          {"chosen_gflops", json_finite(b.chosen_gflops)},
          {"best", b.best},
          {"best_gflops", json_finite(b.best_gflops)},
          {"source", b.source},
          {"reason", b.reason},
          {"probed_at", b.probed_at},
          {"candidates", candidates},
          {"cpu", cpu_peak_json(b.cpu)}};
}

BlasCandidateRecord blas_candidate_from_json(const nlohmann::json& j) {
  if (!j.is_object()) return {};
  return {json_text(j, "name"), json_text(j, "corename"), json_number(j, "gflops"), json_number(j, "max_error"), json_flag(j, "correct"),
          json_text(j, "problem")};
}

BlasRecord blas_from_json(const nlohmann::json& j) {
  BlasRecord b;
  if (!j.is_object()) return b;
  b.library = json_text(j, "library");
  b.detected = json_text(j, "detected");
  b.detected_gflops = json_number(j, "detected_gflops");
  b.chosen = json_text(j, "chosen");
  b.chosen_gflops = json_number(j, "chosen_gflops");
  b.best = json_text(j, "best");
  b.best_gflops = json_number(j, "best_gflops");
  b.source = json_text(j, "source");
  b.reason = json_text(j, "reason");
  b.probed_at = json_text(j, "probed_at");
  if (auto it = j.find("candidates"); it != j.end() && it->is_array())
    for (const auto& c : *it)
      if (c.is_object()) b.candidates.push_back(blas_candidate_from_json(c));
  if (auto it = j.find("cpu"); it != j.end()) b.cpu = cpu_peak_from_json(*it);
  return b;
}

}  // namespace chaosbench::reports
