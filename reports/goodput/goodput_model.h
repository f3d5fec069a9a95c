// The goodput model: from a job's costs and a failure model, goodput and ETTR for N nodes
// (closed forms and a Monte Carlo of the same mechanism), the optimal checkpoint
// interval, and a prediction interval for the run's own goodput. Pure and deterministic
// for a seed; docs/goodput-model.md gives every formula and assumption.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <vector>

#include "reports/goodput/goodput_inputs.h"
#include "reports/goodput/goodput_report.h"

namespace chaosbench::reports {

struct GoodputModel {
  std::uint64_t seed = 1;
  std::size_t trials = 2000;                    // simulated jobs for the run's prediction
  long steady_failures = kSteadyStateFailures;  // failures per steady-state estimate
  std::optional<int> chart_nodes;               // the interval chart's N (also a row); see chart_nodes_for
  bool optimise = true;                         // search the Monte Carlo optimum per row

  // Validates `in` (std::invalid_argument) and computes the report.
  GoodputReport run(const GoodputInputs& in) const;
};

// The interval chart's N when none is asked for: 1024 with the default grid, else the
// largest grid N at or below 10,000 (the smallest when none is).
int chart_nodes_for(const std::vector<int>& grid);

// The per-failure costs the Monte Carlo draws from: the run's measured failures when
// there are at least kMinBootstrapFailures and every cost is measured, else none (the
// medians, fixed).
inline constexpr std::size_t kMinBootstrapFailures = 3;
bool use_bootstrap(const GoodputInputs& in);

}  // namespace chaosbench::reports
