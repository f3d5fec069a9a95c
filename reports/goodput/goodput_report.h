// What the goodput model (goodput_model.h) predicts, as plain values for its three
// renderers (the console table, JSON, the HTML page): one row per node count, goodput
// against the checkpoint interval at one node count, and the run's own prediction
// interval, with the inputs and the assumptions behind them. Goodputs are fractions.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "reports/goodput/goodput_closed_form.h"
#include "reports/goodput/goodput_inputs.h"
#include "reports/goodput/goodput_monte_carlo.h"

namespace chaosbench::reports {

struct GoodputReport {
  // One node count N: the job's MTBF M = M_node / N.
  struct Row {
    int nodes = 0;
    double gpus = 0;  // N x GPUs per node
    double job_mtbf_s = 0;
    bool run_nodes = false;  // the run's own N
    // At the current interval.
    double first_order = 0;              // 1 - first-order waste
    std::optional<double> daly_exact;    // checkpoint mode only
    SteadyState monte_carlo;
    FirstOrderValidity first_order_valid;
    // The optimal interval (checkpoint mode only: in memory mode a longer interval is
    // always better, so there is none).
    std::optional<double> young_s, daly_s, exact_s;  // exact: the minimiser of Daly's T_w
    std::optional<double> monte_carlo_opt_s;
    std::optional<double> goodput_at_opt;            // the Monte Carlo's, at its optimum
    std::optional<double> daly_exact_at_opt;         // Daly's exact goodput at exact_s
  };

  // Goodput against the checkpoint interval at one N (the interval chart).
  struct IntervalCurve {
    struct Point {
      double interval_s = 0;
      double first_order = 0;
      std::optional<double> daly_exact;
      double monte_carlo = 0;
    };
    int nodes = 0;
    double job_mtbf_s = 0;
    std::vector<Point> points;  // ascending interval
    std::optional<double> young_s, daly_s, exact_s, monte_carlo_opt_s;
    double current_s = 0;
  };

  // One job like the run, simulated many times.
  struct RunPrediction {
    int nodes = 0;
    GoodputInputs::RunFailures failures;
    double work_s = 0;      // steps x step time
    double startup_s = 0;
    JobPrediction jobs;
    std::optional<double> measured_goodput;  // fraction
    std::optional<bool> goodput_inside;
    std::optional<double> measured_ettr;
    std::optional<bool> ettr_inside;
  };

  GoodputInputs inputs;
  std::uint64_t seed = 0;
  long steady_failures = 0;
  std::string costs;  // "fixed (medians)" or "bootstrap of K measured failures"
  bool bootstrap = false;
  std::vector<Row> rows;
  IntervalCurve curve;
  std::optional<RunPrediction> run;
  std::vector<std::string> assumptions;
};

}  // namespace chaosbench::reports
