// The BLAS kernel and CPU peak a run gives its workers (harness/doctor/blas_choice.h):
// for workloads that do linear algebra on the CPU (train, serve, and command, which may
// be anything, PyTorch included), not for the collective benchmark.
#pragma once

#include <map>
#include <optional>
#include <string>

#include "harness/scenario/scenario.h"
#include "reports/model/run_model.h"

namespace chaosbench::harness {

// Chooses (probing once per host, then from the cache) and adds to `env` what every
// process of the workload gets: OPENBLAS_CORETYPE (unless the user's environment or the
// scenario's `env` sets it) and CHAOSBENCH_CPU_PEAK_GFLOPS (one core's fp32 peak, the
// denominator of train/mfu_hw). nullopt for workloads without BLAS. Blocking: up to a few
// seconds on a host's first run.
std::optional<reports::BlasRecord> choose_workload_blas(const Scenario& scenario, const std::string& self_exe,
                                                        std::map<std::string, std::string>& env);

}  // namespace chaosbench::harness
