// The facts of a run's resolved scenario that reports judge by (the gate's per-check
// tolerances, the settings the tuning advice cites), as plain values. Derived once, from
// the scenario JSON a RunResult embeds, by set_scenario(): a results.json read back gives
// the same facts as the run that wrote it, and no reporter parses the scenario itself.
// Never serialized: results.json keeps only the scenario.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace chaosbench::reports {

struct ScenarioFacts {
  // A check's {"metric", "labels"?, "phase"?, "tolerance"} for the baseline gate; checks
  // without a readable tolerance give none. A check without a phase applies to every phase.
  struct CheckTolerance {
    std::string metric;
    std::map<std::string, std::string> labels;  // each value as text (label_to_string's form)
    std::optional<std::string> phase;
    double tolerance = 0;  // a fraction: "10%" and 10 both give 0.10
  };

  std::string workload_kind;            // "train", "serve", ...; "" when the scenario names none
  std::optional<double> cluster_nodes;  // cluster.nodes, when a number

  // The train settings the tuning advice reads, as the scenario gives them.
  bool bucket_size_given = false;          // workload.bucket_size present
  std::uint64_t bucket_bytes = 1 << 20;    // its value; the train default (1 MiB) otherwise
  std::vector<double> model_layers;        // workload.model.layers; empty unless all numbers
  std::optional<bool> checkpoint_async;    // workload.checkpoint.async, when a boolean
  std::string checkpoint_mode;             // workload.checkpoint.mode ("full", "incremental")
  std::optional<double> checkpoint_every;  // workload.checkpoint.every_steps, when a number
  std::string recovery_mode;               // workload.recovery.mode ("restart", "elastic")
  // workload.batch_size (global samples per step) and workload.parallel.microbatches; the
  // train defaults (1024, 1: bench/train/train_settings.h) when a train scenario leaves
  // them out; nullopt for other workloads (a `command` job's are its own).
  std::optional<double> batch_size;
  std::optional<double> microbatches;

  std::vector<CheckTolerance> tolerances;  // in the scenario's order (a later one wins)

  // A fault with random arrivals (a soak), as the goodput model (goodput_run_inputs.h)
  // reads it; durations in seconds. Faults whose arrivals do not parse are left out.
  struct ArrivalFault {
    std::string name;
    std::string type;
    std::string process;                   // "poisson" or "weibull"
    double mtbf_s = 0;                     // poisson: arrivals.mtbf; weibull: arrivals.scale
    double shape = 1;                      // weibull: arrivals.shape
    int max_occurrences = 1000;            // arrivals.max_occurrences (the scenario's default)
    double probability = 1;                // the fault's `probability`: each occurrence fires with it
    std::optional<double> at_s;            // the fault's `at`
    std::optional<double> duration_s;      // its `duration`
    std::optional<double> restart_after_s;
  };
  std::optional<double> steps;              // workload.steps, when a number
  std::vector<ArrivalFault> arrival_faults;  // in the scenario's order
};

// The facts of a resolved scenario (JSON text). Lenient, as reports are: what is missing
// or mistyped is left at its default, and text that is not JSON gives no facts.
ScenarioFacts scenario_facts_of(const std::string& scenario_json);

}  // namespace chaosbench::reports
