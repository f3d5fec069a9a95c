// What the two ways of gating a record share (gate.cc: one run per side, samples;
// gate_runs.cc: repeated runs, one figure per run): the row's identity and how numbers
// read in a reason (the direction of a regression is common::worse_sign). Internal to the gate; pure.
#pragma once

#include <string>
#include <vector>

#include "reports/model/run_model.h"

namespace chaosbench::reports::gate_detail {

// A row for record `r`'s statistic `stat` with its tolerance; the caller fills the rest.
MetricComparison row_for(const MetricRecord& r, const std::string& stat, double tolerance);

std::string signed_pct(double x);  // "+4.2%", "+inf%"
std::string p_text(double p);  // "0.0032", "3.2e-45"

// The 21 quantiles 0, 5, ..., 100 % of `values` (common/values/percentile.h; empty for none):
// what the report plots of a sample.
std::vector<double> plot_quantiles(const std::vector<double>& values);

}  // namespace chaosbench::reports::gate_detail
