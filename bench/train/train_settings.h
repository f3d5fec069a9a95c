// The train workload's settings: what a scenario's workload of kind "train" may set, with
// the one definition of every default. The scenario parser fills it
// (harness/scenario/train_workload_parser.cc); the launcher encodes it into the
// `chaosbench worker train` command line and the worker decodes it back, so a default
// changes here and nowhere else. Per-launch values (seed, store, host, watchdog) are not
// settings: the launcher adds them and the worker reads them beside these flags.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "bench/common/program_options_fwd.h"
#include "bench/train/recovery_spec.h"
#include "common/values/units.h"

namespace chaosbench::bench::train {

// The worker's replica check interval when no one chose one (a rank started by hand).
inline constexpr int kDefaultSdcCheckEvery = 1;

struct TrainSettings {
  struct Checkpoint {
    int every_steps = 0;  // 0: no checkpoints
    bool incremental = true;
    int full_every = 4;  // incremental: every K-th checkpoint is full
    bool async = true;
    std::string dir;  // scenario: empty is <out>/checkpoints, relative is to the scenario

    bool operator==(const Checkpoint&) const = default;
  };
  // Hybrid parallelism (docs/scenario-format.md "parallel", docs/hybrid-parallel.md): world = tp × pp × dp.
  // The defaults (1, 1, 1: dp follows the world) are the data-parallel trainer unchanged.
  struct Parallel {
    int tp = 1;            // tensor-parallel size: Megatron column/row pairs split over tp ranks
    int pp = 1;            // pipeline stages
    int dp = 0;            // data-parallel replicas; 0: world / (tp × pp)
    int microbatches = 1;  // per replica and step (pipeline schedules)
    std::string schedule = "1f1b";  // "gpipe" or "1f1b"
    bool hybrid() const { return tp > 1 || pp > 1; }

    bool operator==(const Parallel&) const = default;
  };

  std::string backend = "gloo";  // "gloo" or "nccl" (device cuda)
  std::string device = "cpu";    // "cpu" or "cuda"
  std::vector<int> layers{256, 1024, 1024, 1024, 16};  // input width first
  int batch_size = 1024;  // global: samples per optimizer step over all ranks
  std::int64_t steps = 400;
  std::string optimizer = "sgd";  // "sgd" (with momentum) or "adamw"
  // float: the trainer's precision, so a value survives the command line unchanged.
  float lr = 0.05f, momentum = 0.9f, weight_decay = 0.0f, beta1 = 0.9f, beta2 = 0.999f, eps = 1e-8f;
  common::Size bucket_size{1u << 20};  // gradient bucket of the overlapped allreduce
  std::string algorithm = "tcp_ring";  // gradient allreduce: "tcp_ring" (its own), "bcube" or "ring" (gloo)
  int threads = 1;                     // OpenBLAS threads
  std::optional<double> target_loss;   // a "target_reached" event when the loss first gets there
  Checkpoint checkpoint;
  Parallel parallel;
  RecoverySpec recovery;  // the worker reads only its mode
  common::Duration timeout{std::chrono::seconds(10)};  // a collective (or joining) that takes longer has failed
  // Replicas compare fingerprints every N steps; 0: never. Unset: the launcher decides
  // (every step when the scenario injects bit flips, else never: the check costs a hash
  // of the state per step); a worker started without the flag uses kDefaultSdcCheckEvery.
  std::optional<int> sdc_check_every;

  bool operator==(const TrainSettings&) const = default;
};

// The settings as `chaosbench worker train` flags ("--batch-size", "1024", ...). The
// checkpoint flags only when checkpoint.every_steps > 0; checkpoint.dir as given (the
// launcher resolves it first).
std::vector<std::string> encode_train_settings(const TrainSettings& s);

// Declares the settings' flags, with TrainSettings{}'s defaults, on `options`.
void add_train_settings_flags(boost::program_options::options_description& options);
// Reads them back from a parsed command line. Throws std::invalid_argument naming the
// flag ("--algorithm: expected bcube, ring or tcp_ring") for a value no rank can use.
TrainSettings read_train_settings(const boost::program_options::variables_map& vm);
// add + parse + read in one: the settings of a command line made only of these flags.
// Throws std::invalid_argument for unknown flags and bad values.
TrainSettings decode_train_settings(const std::vector<std::string>& flags);

}  // namespace chaosbench::bench::train
