// What the goodput model (goodput_model.h, docs/goodput-model.md) is given: a job's
// fault-free step time, its checkpoint interval and save cost, what one failure costs,
// the failure model, and each value's provenance (measured in a run, read from the
// scenario, given on the command line, or assumed). Plain values, all times in seconds;
// filled from a results.json by goodput_run_inputs.h and overridden by the CLI's flags.
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace chaosbench::reports {

struct GoodputInputs {
  enum class Provenance { kMeasured, kScenario, kGiven, kAssumed };

  // One number and where it comes from ("train/step_time{phase=baseline} p50").
  struct Value {
    double value = 0;
    Provenance provenance = Provenance::kAssumed;
    std::string source;
  };

  // What a failure loses besides its downtime. kCheckpoint (restart recovery): the work
  // since the last completed checkpoint. kMemory (elastic recovery): the measured
  // recompute only; no checkpoint is read back.
  enum class LostWork { kCheckpoint, kMemory };

  // Time between failures. kPoisson: exponential with mean M. kWeibull: a renewal process
  // whose inter-arrival times are Weibull with mean M and shape k (scale M / Γ(1 + 1/k)).
  enum class Process { kPoisson, kWeibull };

  // One measured failure's costs (a resilience/time_lost record per part). Rejoin is the
  // pause of an elastic job that re-forms to admit the ranks the failure ended, once they
  // are back: a second stop, counted with the downtime.
  struct FailureCost {
    double detect_s = 0, restart_s = 0, restore_s = 0, recompute_s = 0, rejoin_s = 0;
    double downtime_s() const { return detect_s + restart_s + restore_s + rejoin_s; }
  };

  // The run's own failure process, from its scenario's fault with random arrivals (a
  // soak): what the run's prediction interval simulates, mimicking the schedule.
  struct RunFailures {
    std::string fault;                         // the fault's name in the scenario
    std::string type;                          // node.kill, rank.kill, gpu.xid, ...
    Process process = Process::kPoisson;
    double mtbf_s = 0;                         // poisson: the mean; weibull: the scale
    double shape = 1;                          // weibull only
    double offset_s = 0;                       // the fault's `at`: arrivals start there
    double dead_time_s = 0;                    // its `duration`: one occurrence at a time
    int max_occurrences = 1000;                // the schedule stops there
    double probability = 1;                    // each occurrence fires with this probability
    double mean_s() const;                     // the mean time between firing arrivals
  };

  Value step_time_s;
  Value checkpoint_interval_s;  // seconds of work between checkpoints
  Value checkpoint_cost_s;      // blocking time per save
  Value detect_s, restart_s, restore_s, recompute_s, rejoin_s;  // per failure (medians)
  Value startup_s;              // once per job
  // Productive step time / wall time while nothing fails, checkpoint saves aside (the
  // gaps between steps): resilience/running_efficiency with the saves' share taken out.
  // The run's prediction runs its steps at step time / this and counts step time as
  // productive, as resilience/goodput does. 1 (assumed) without a measure.
  Value running_efficiency{1.0, Provenance::kAssumed, "no gaps between steps"};
  std::optional<double> baseline_ettr;  // resilience/running_efficiency, what the efficiency comes from
  LostWork lost_work = LostWork::kCheckpoint;
  Value lost_work_source;       // provenance of lost_work (value unused)
  std::string unrecoverable;    // why a failure would end the job (recovery "none"); "" when it recovers
  std::optional<double> checkpoint_every_steps;  // the scenario's: the interval is this x step time
  std::vector<FailureCost> measured_failures;  // the run's, in order; bootstrap from >= 3

  // The cluster-scale failure model: per-node MTBF, the process and its shape.
  Value node_mtbf_s;
  Process process = Process::kPoisson;
  Value weibull_shape;          // 1 for poisson
  Value gpus_per_node;
  std::vector<int> nodes;       // the grid of N (ascending, unique)

  // The run itself, when the inputs come from a results.json.
  std::optional<int> run_nodes;
  std::optional<double> run_steps;             // workload.steps
  std::optional<RunFailures> run_failures;     // none: no prediction for the run
  std::optional<double> measured_goodput_pct;  // resilience/goodput{phase=overall}
  std::optional<double> measured_ettr;         // resilience/ettr{phase=overall}
  std::optional<double> measured_mtti_s;       // resilience/mtti_observed{phase=overall}
  std::vector<std::string> notes;              // what was missing and what stood in for it

  double downtime_s() const { return detect_s.value + restart_s.value + restore_s.value + rejoin_s.value; }
};

// "measured", "scenario", "given", "assumed".
const char* to_string(GoodputInputs::Provenance p);
// "checkpoint", "memory"; "poisson", "weibull".
const char* to_string(GoodputInputs::LostWork w);
const char* to_string(GoodputInputs::Process p);

// The mean of a Weibull distribution with this scale and shape: scale Γ(1 + 1/shape).
double weibull_mean(double scale, double shape);

// Throws std::invalid_argument saying which input is wrong: a step time, interval or MTBF
// at or below zero, a negative cost, a Weibull shape at or below zero, a node count below
// 1 or above 1,000,000, fewer than 1 GPU per node, a job that cannot recover. Every value
// must be finite.
void validate(const GoodputInputs& in);

}  // namespace chaosbench::reports
