// The BLAS record (reports::BlasRecord) as JSON: in results.json's environment, in
// `doctor --json`, and in the harness's per-host probe cache. Reading is lenient (a
// missing or mistyped field keeps its default), since the text may come from an older
// version or a damaged file.
#pragma once

#include <nlohmann/json_fwd.hpp>

#include "reports/model/run_model.h"

namespace chaosbench::reports {

nlohmann::ordered_json blas_json(const BlasRecord& blas);
BlasRecord blas_from_json(const nlohmann::json& j);
// One candidate: name, corename, gflops, max_error, correct, problem (what
// `chaosbench worker blas-probe` prints has all but name and problem).
BlasCandidateRecord blas_candidate_from_json(const nlohmann::json& j);

nlohmann::ordered_json cpu_peak_json(const CpuPeakRecord& cpu);
CpuPeakRecord cpu_peak_from_json(const nlohmann::json& j);

}  // namespace chaosbench::reports
