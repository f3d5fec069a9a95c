#include "reports/goodput/goodput_assumptions.h"

#include <cmath>
#include <fmt/format.h>

namespace chaosbench::reports {
namespace {

std::string failure_process(const GoodputInputs& in) {
  if (in.process == GoodputInputs::Process::kPoisson)
    return fmt::format("Failures: each node fails independently, exponentially with mean M_node = {}; any node's "
                       "failure stops the job, so the job sees a Poisson process with mean M = M_node / N.",
                       format_duration_s(in.node_mtbf_s.value));
  return fmt::format("Failures: one job-level Weibull renewal process with shape {:g} and mean M = M_node / N "
                     "(M_node = {}): inter-arrival times are drawn from the previous arrival, recovery does not "
                     "reset them. The superposition of N independent per-node processes tends to Poisson as N "
                     "grows, so at large N this keeps more clustering than N fresh nodes would.",
                     in.weibull_shape.value, format_duration_s(in.node_mtbf_s.value));
}

std::string lost_work(const GoodputInputs& in) {
  if (in.lost_work == GoodputInputs::LostWork::kCheckpoint)
    return "Lost work (checkpoint mode, restart recovery): a failure loses the work since the last completed save, "
           "and a save in progress; the measured recompute is not used (the mechanism gives the loss).";
  return fmt::format("Lost work (memory mode, elastic recovery): a failure loses only the recompute ({}) and a "
                     "save in progress; nothing is read back from a checkpoint, so saves only cost time and "
                     "there is no optimal interval.",
                     format_duration_s(in.recompute_s.value));
}

std::string mechanism(const GoodputInputs& in) {
  return fmt::format("Mechanism: work in segments of tau = {} each followed by a blocking save of C = {}; a failure "
                     "costs a downtime R = detect + restart + restore (+ rejoin) = {} (median), which a further failure "
                     "restarts from zero with its own costs; then work resumes.",
                     format_duration_s(in.checkpoint_interval_s.value), format_duration_s(in.checkpoint_cost_s.value),
                     format_duration_s(in.downtime_s()));
}

}  // namespace

std::string format_duration_s(double s) {
  if (!std::isfinite(s)) return "-";
  if (s == 0) return "0 s";
  const double a = std::abs(s);
  if (a < 1e-3) return fmt::format("{:.3g} us", s * 1e6);
  if (a < 1) return fmt::format("{:.3g} ms", s * 1e3);
  if (a < 100) return fmt::format("{:.3g} s", s);
  if (a < 3600) return fmt::format("{:.3g} min", s / 60);
  if (a < 172800) return fmt::format("{:.3g} h", s / 3600);
  return fmt::format("{:.3g} d", s / 86400);
}

std::vector<std::string> goodput_assumptions(const GoodputReport& r) {
  const auto& in = r.inputs;
  std::vector<std::string> out{failure_process(in), mechanism(in), lost_work(in)};
  out.push_back(r.bootstrap ? fmt::format("Costs: the Monte Carlo draws each failure's detect, restart, restore and "
                                          "recompute together from the {} measured failures (a bootstrap); the "
                                          "closed forms use their medians.",
                                          in.measured_failures.size())
                            : "Costs: every failure costs the same (the medians, or the values given).");
  out.push_back(fmt::format("Steady state (the table): one job simulated until failure {} arrives, seed {}, the same "
                            "failures at every interval (common random numbers); the startup is left out. Goodput = "
                            "productive work / wall time; ETTR = productive work / (wall time - startup), as "
                            "resilience/ettr counts it, which equals goodput there (no startup).",
                            r.steady_failures, r.seed));
  out.push_back(fmt::format("Closed forms assume exponential failures. First-order goodput = 1 - C/tau - tau/2M - "
                            "R/M (memory mode: 1 - C/tau - (R + recompute)/M), flagged valid where that waste is at "
                            "most {:g}% (then within 0.9 point of Daly's exact expression); Daly's exact: T_s / "
                            "(M e^(R/M) (e^((tau+C)/M) - 1) T_s / tau).",
                            100 * kFirstOrderValidWaste));
  out.emplace_back("Optimal interval: Young sqrt(2CM); Daly's higher-order estimate; the exact minimiser of Daly's "
                   "T_w; the Monte Carlo's (a scan around Daly's, then a parabola).");
  if (in.gpus_per_node.value > 0)
    out.push_back(fmt::format("GPUs = N x {:g} per node; the failure rate is per node, so GPUs only label the rows.",
                              in.gpus_per_node.value));
  if (r.run)
    out.push_back(fmt::format("The run's prediction: one job of {} work (steps x step time) plus the startup once, "
                              "failures as the scenario's fault {} draws them (an arrival within {} of the previous "
                              "one waits for it; at most {}), {} simulated jobs; the 95% prediction interval is their "
                              "2.5% to 97.5% quantiles. Goodput = work / wall, startup included; ETTR = work / (wall - "
                              "startup).",
                              format_duration_s(r.run->work_s), r.run->failures.fault,
                              format_duration_s(r.run->failures.dead_time_s), r.run->failures.max_occurrences,
                              r.run->jobs.jobs));
  return out;
}

}  // namespace chaosbench::reports
