#include "reports/goodput/goodput_model.h"

#include <algorithm>
#include <cmath>
#include <fmt/format.h>
#include <stdexcept>

#include "reports/goodput/goodput_assumptions.h"
#include "reports/goodput/goodput_run_inputs.h"

namespace chaosbench::reports {
namespace {

using LostWork = GoodputInputs::LostWork;
using Process = GoodputInputs::Process;

// What every simulation of these inputs shares: the interval, the save, the costs.
SimulationSetup base_setup(const GoodputInputs& in) {
  SimulationSetup s;
  s.interval_s = in.checkpoint_interval_s.value;
  s.cost_s = in.checkpoint_cost_s.value;
  s.lost_work = in.lost_work;
  s.fixed_cost = {in.detect_s.value, in.restart_s.value, in.restore_s.value, in.recompute_s.value,
                  in.rejoin_s.value};
  if (use_bootstrap(in)) s.bootstrap = in.measured_failures;
  return s;
}

// The cluster-scale failure model at N nodes: one job-level process with mean M_node / N.
FailureArrivals::Model scale_arrivals(const GoodputInputs& in, double job_mtbf_s) {
  return FailureArrivals::Model::with_mean(in.process, job_mtbf_s, in.weibull_shape.value);
}

FirstOrderWaste first_order(const GoodputInputs& in, double interval_s, double mtbf_s) {
  return in.lost_work == LostWork::kCheckpoint
             ? first_order_waste(interval_s, in.checkpoint_cost_s.value, in.downtime_s(), mtbf_s)
             : first_order_waste_memory(interval_s, in.checkpoint_cost_s.value, in.downtime_s(),
                                        in.recompute_s.value, mtbf_s);
}

// Optima exist in checkpoint mode with a save that costs something: in memory mode, or
// with free saves, the interval's best value is at an end of its range.
bool has_optimum(const GoodputInputs& in) {
  return in.lost_work == LostWork::kCheckpoint && in.checkpoint_cost_s.value > 0;
}

GoodputReport::Row row_for(const GoodputModel& model, const GoodputInputs& in, int nodes) {
  GoodputReport::Row row;
  row.nodes = nodes;
  row.gpus = nodes * in.gpus_per_node.value;
  row.job_mtbf_s = in.node_mtbf_s.value / nodes;
  row.run_nodes = in.run_nodes && *in.run_nodes == nodes;
  const double tau = in.checkpoint_interval_s.value, cost = in.checkpoint_cost_s.value, m = row.job_mtbf_s;
  const auto waste = first_order(in, tau, m);
  row.first_order = 1 - waste.total();
  row.first_order_valid = first_order_validity(waste, in.process == Process::kPoisson);
  auto setup = base_setup(in);
  setup.arrivals = scale_arrivals(in, m);
  row.monte_carlo = steady_state(setup, model.steady_failures, model.seed);
  if (in.lost_work != LostWork::kCheckpoint) return row;
  row.daly_exact = daly_goodput(tau, cost, in.downtime_s(), m);
  if (!has_optimum(in)) return row;
  row.young_s = young_interval(cost, m);
  row.daly_s = daly_interval(cost, m);
  row.exact_s = exact_optimal_interval(cost, m);
  row.daly_exact_at_opt = daly_goodput(*row.exact_s, cost, in.downtime_s(), m);
  if (!model.optimise) return row;
  const auto opt = find_optimal_interval(setup, *row.daly_s, model.steady_failures, model.seed);
  row.monte_carlo_opt_s = opt.interval_s;
  row.goodput_at_opt = opt.goodput;
  return row;
}

GoodputReport::IntervalCurve curve_for(const GoodputModel& model, const GoodputInputs& in, int nodes) {
  GoodputReport::IntervalCurve c;
  c.nodes = nodes;
  c.job_mtbf_s = in.node_mtbf_s.value / nodes;
  c.current_s = in.checkpoint_interval_s.value;
  const double cost = in.checkpoint_cost_s.value, m = c.job_mtbf_s;
  double lo = c.current_s, hi = c.current_s;
  if (has_optimum(in)) {
    c.young_s = young_interval(cost, m);
    c.daly_s = daly_interval(cost, m);
    c.exact_s = exact_optimal_interval(cost, m);
    lo = std::min({lo, *c.young_s, *c.exact_s});
    hi = std::max({hi, *c.young_s, *c.exact_s});
  }
  lo /= 8;
  hi *= 8;
  auto setup = base_setup(in);
  setup.arrivals = scale_arrivals(in, m);
  constexpr int kPoints = 41;
  for (int i = 0; i < kPoints; ++i) {
    GoodputReport::IntervalCurve::Point p;
    p.interval_s = lo * std::pow(hi / lo, static_cast<double>(i) / (kPoints - 1));
    p.first_order = 1 - first_order(in, p.interval_s, m).total();
    if (in.lost_work == LostWork::kCheckpoint) p.daly_exact = daly_goodput(p.interval_s, cost, in.downtime_s(), m);
    setup.interval_s = p.interval_s;
    p.monte_carlo = steady_state(setup, model.steady_failures, model.seed).goodput;
    c.points.push_back(p);
  }
  if (has_optimum(in) && model.optimise) {
    setup.interval_s = in.checkpoint_interval_s.value;
    c.monte_carlo_opt_s = find_optimal_interval(setup, *c.daly_s, model.steady_failures, model.seed).interval_s;
  }
  return c;
}

std::optional<GoodputReport::RunPrediction> predict_run(const GoodputModel& model, const GoodputInputs& in) {
  if (!in.run_failures || !in.run_nodes || !in.run_steps) return std::nullopt;
  GoodputReport::RunPrediction p;
  p.nodes = *in.run_nodes;
  p.failures = *in.run_failures;
  p.work_s = *in.run_steps * in.step_time_s.value;
  p.startup_s = in.startup_s.value;
  auto setup = base_setup(in);
  const auto& f = p.failures;
  setup.arrivals = {.process = f.process,
                    .scale_s = f.mtbf_s,
                    .shape = f.shape,
                    .offset_s = f.offset_s,
                    .dead_time_s = f.dead_time_s,
                    .max_occurrences = f.max_occurrences,
                    .probability = f.probability};
  setup.startup_s = p.startup_s;
  // The steps take step time / efficiency of wall time while nothing fails; only their
  // step time counts as productive (resilience/goodput's measure).
  const double efficiency = in.running_efficiency.value;
  setup.work_s = p.work_s / efficiency;
  p.jobs = predict_job(setup, model.trials, model.seed);
  for (double* q : {&p.jobs.low, &p.jobs.median, &p.jobs.high, &p.jobs.ettr_low, &p.jobs.ettr_median, &p.jobs.ettr_high})
    *q *= efficiency;
  for (double& g : p.jobs.goodputs) g *= efficiency;
  if (in.measured_goodput_pct) {
    p.measured_goodput = *in.measured_goodput_pct / 100;
    p.goodput_inside = *p.measured_goodput >= p.jobs.low && *p.measured_goodput <= p.jobs.high;
  }
  if (in.measured_ettr) {
    p.measured_ettr = *in.measured_ettr;
    p.ettr_inside = *p.measured_ettr >= p.jobs.ettr_low && *p.measured_ettr <= p.jobs.ettr_high;
  }
  return p;
}

}  // namespace

bool use_bootstrap(const GoodputInputs& in) {
  using P = GoodputInputs::Provenance;
  // A given (or assumed) part would be ignored by the draws from the measured failures.
  for (const auto* v : {&in.detect_s, &in.restart_s, &in.restore_s, &in.recompute_s, &in.rejoin_s})
    if (v->provenance != P::kMeasured && v->provenance != P::kAssumed) return false;
  return in.measured_failures.size() >= kMinBootstrapFailures && in.detect_s.provenance == P::kMeasured;
}

int chart_nodes_for(const std::vector<int>& grid) {
  if (grid.empty() || grid == default_node_grid()) return 1024;
  int best = *std::min_element(grid.begin(), grid.end());
  for (int n : grid)
    if (n <= 10'000) best = std::max(best, n);
  return best;
}

GoodputReport GoodputModel::run(const GoodputInputs& inputs) const {
  validate(inputs);
  if (trials < 1 || steady_failures < 2) throw std::invalid_argument("the Monte Carlo needs at least one trial");
  GoodputReport report;
  report.inputs = inputs;
  auto& in = report.inputs;
  const int chart = chart_nodes.value_or(chart_nodes_for(in.nodes));
  if (in.run_nodes) in.nodes.push_back(*in.run_nodes);
  if (chart_nodes) in.nodes.push_back(*chart_nodes);  // a chart asked for at N gets its row
  std::sort(in.nodes.begin(), in.nodes.end());
  in.nodes.erase(std::unique(in.nodes.begin(), in.nodes.end()), in.nodes.end());
  if (chart < 1 || chart > 1'000'000)
    throw std::invalid_argument(fmt::format("a node count must lie in 1..1,000,000, not {}", chart));
  report.seed = seed;
  report.steady_failures = steady_failures;
  report.bootstrap = use_bootstrap(in);
  report.costs = report.bootstrap ? fmt::format("bootstrap of {} measured failures", in.measured_failures.size())
                                  : "fixed (the values above)";
  for (int n : in.nodes) report.rows.push_back(row_for(*this, in, n));
  report.curve = curve_for(*this, in, chart);
  report.run = predict_run(*this, in);
  report.assumptions = goodput_assumptions(report);
  return report;
}

}  // namespace chaosbench::reports
