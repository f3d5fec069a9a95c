#include "reports/goodput/goodput_inputs.h"

#include <cmath>
#include <fmt/format.h>
#include <stdexcept>

namespace chaosbench::reports {
namespace {

void require(bool ok, const std::string& what) {
  if (!ok) throw std::invalid_argument(what);
}

// A time at or above zero (a cost), or above zero (`positive`), and finite.
void check_time(const GoodputInputs::Value& v, const char* name, bool positive) {
  require(std::isfinite(v.value), fmt::format("{} is not a finite number ({})", name, v.source));
  if (positive) require(v.value > 0, fmt::format("{} must be above zero, not {:g} s ({})", name, v.value, v.source));
  else require(v.value >= 0, fmt::format("{} must not be negative, not {:g} s ({})", name, v.value, v.source));
}

}  // namespace

const char* to_string(GoodputInputs::Provenance p) {
  switch (p) {
    case GoodputInputs::Provenance::kMeasured: return "measured";
    case GoodputInputs::Provenance::kScenario: return "scenario";
    case GoodputInputs::Provenance::kGiven: return "given";
    case GoodputInputs::Provenance::kAssumed: return "assumed";
  }
  return "assumed";
}

const char* to_string(GoodputInputs::LostWork w) {
  return w == GoodputInputs::LostWork::kMemory ? "memory" : "checkpoint";
}

const char* to_string(GoodputInputs::Process p) {
  return p == GoodputInputs::Process::kWeibull ? "weibull" : "poisson";
}

double weibull_mean(double scale, double shape) { return scale * std::tgamma(1 + 1 / shape); }

double GoodputInputs::RunFailures::mean_s() const {
  return (process == Process::kWeibull ? weibull_mean(mtbf_s, shape) : mtbf_s) / probability;
}

void validate(const GoodputInputs& in) {
  require(in.unrecoverable.empty(), in.unrecoverable);
  check_time(in.step_time_s, "the step time", true);
  check_time(in.checkpoint_interval_s, "the checkpoint interval", true);
  check_time(in.checkpoint_cost_s, "the checkpoint cost", false);
  check_time(in.detect_s, "the detect time", false);
  check_time(in.restart_s, "the restart time", false);
  check_time(in.restore_s, "the restore time", false);
  check_time(in.recompute_s, "the recompute time", false);
  check_time(in.rejoin_s, "the rejoin time", false);
  check_time(in.startup_s, "the startup time", false);
  check_time(in.node_mtbf_s, "the per-node MTBF", true);
  require(std::isfinite(in.running_efficiency.value) && in.running_efficiency.value > 0 &&
              in.running_efficiency.value <= 1,
          fmt::format("the running efficiency must lie in (0, 1], not {:g}", in.running_efficiency.value));
  for (const auto& f : in.measured_failures)
    require(f.detect_s >= 0 && f.restart_s >= 0 && f.restore_s >= 0 && f.recompute_s >= 0 && f.rejoin_s >= 0 &&
                std::isfinite(f.downtime_s() + f.recompute_s),
            "a measured failure's cost is negative or not finite (resilience/time_lost)");
  if (in.process == GoodputInputs::Process::kWeibull)
    require(std::isfinite(in.weibull_shape.value) && in.weibull_shape.value >= 0.1 && in.weibull_shape.value <= 10,
            fmt::format("the Weibull shape must lie in 0.1..10 (as a scenario's), not {:g}", in.weibull_shape.value));
  if (in.run_steps)
    require(std::isfinite(*in.run_steps) && *in.run_steps >= 1,
            fmt::format("the run's workload.steps is {:g}: it must be 1 or more", *in.run_steps));
  require(std::isfinite(in.gpus_per_node.value) && in.gpus_per_node.value >= 1,
          fmt::format("GPUs per node must be at least 1, not {:g}", in.gpus_per_node.value));
  require(!in.nodes.empty(), "no node count to model");
  for (int n : in.nodes)
    require(n >= 1 && n <= 1'000'000, fmt::format("a node count must lie in 1..1,000,000, not {}", n));
  if (in.run_nodes)
    require(*in.run_nodes >= 1 && *in.run_nodes <= 1'000'000,
            fmt::format("the run's node count must lie in 1..1,000,000, not {}", *in.run_nodes));
  if (const auto& r = in.run_failures) {
    require(std::isfinite(r->mtbf_s) && r->mtbf_s > 0,
            fmt::format("the run's fault {} has an MTBF of {:g} s: it must be above zero", r->fault, r->mtbf_s));
    require(r->mtbf_s >= 1e-6, fmt::format("the run's fault {} has an MTBF of {:g} s: below a microsecond", r->fault,
                                           r->mtbf_s));
    require(std::isfinite(r->shape) && r->shape >= 0.1 && r->shape <= 10,
            fmt::format("the run's fault {} has a Weibull shape of {:g}: it must lie in 0.1..10", r->fault, r->shape));
    require(r->max_occurrences >= 1 && r->max_occurrences <= 100'000,
            fmt::format("the run's fault {} has max_occurrences {}: it must lie in 1..100,000", r->fault,
                        r->max_occurrences));
    require(std::isfinite(r->offset_s) && r->offset_s >= 0 && std::isfinite(r->dead_time_s) && r->dead_time_s >= 0,
            fmt::format("the run's fault {} starts at {:g} s with a window of {:g} s: both must be 0 or more", r->fault,
                        r->offset_s, r->dead_time_s));
    require(r->probability > 0 && r->probability <= 1,
            fmt::format("the run's fault {} fires with probability {:g}: it must lie in (0, 1]", r->fault,
                        r->probability));
  }
}

}  // namespace chaosbench::reports
