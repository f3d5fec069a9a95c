// Everything one rank of the built-in trainer needs to run, as plain values: the model,
// the data, the optimizer, gradient bucketing, checkpoints, recovery and where the ranks
// meet. Built by train_config() from the workload's settings (train_settings.h, which holds
// every default) and the per-launch values `chaosbench worker train` reads beside them.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "bench/checkpoint/checkpoint_writer.h"
#include "bench/train/comm/grad_allreducer.h"
#include "bench/compute/optimizer.h"
#include "bench/train/hybrid/parallel_layout.h"
#include "bench/train/recovery_mode.h"
#include "bench/train/train_settings.h"

namespace chaosbench::bench::train {

struct TrainConfig {
  int rank = 0;        // this rank among the ranks started together
  int world_size = 1;  // ranks started together (the first membership)
  int attempt = 0;     // restarts of the whole job so far (rendezvous keys differ per attempt)
  bool rejoin = false;  // elastic: this rank was restarted and joins the running job

  // From TrainSettings (see there for meanings and defaults).
  std::vector<int> layers;  // input width first
  int batch_size = 0;       // global: samples per optimizer step over all ranks
  std::int64_t steps = 0;
  std::uint64_t seed = 42;
  std::optional<double> target_loss;  // a "target_reached" event when the loss first gets there
  OptimizerConfig optimizer;
  std::uint64_t bucket_bytes = 0;  // gradient bucket size for the overlapped allreduce
  AllreduceAlgorithm algorithm = AllreduceAlgorithm::kTcpRing;
  int threads = 0;      // OpenBLAS threads
  std::string device;   // "cpu" or "cuda" (device_factory.h)
  std::string backend;  // gradient allreduce: "gloo" (host buffers) or "nccl" (cuda)

  std::string checkpoint_dir;  // empty: no checkpoints
  int checkpoint_every = 0;    // steps between checkpoints; 0: none
  bool checkpoint_incremental = true;
  int checkpoint_full_every = 0;
  bool checkpoint_async = true;

  RecoveryMode recovery = RecoveryMode::kNone;
  std::string store;                 // "file:/dir", the rendezvous store
  std::string prefix = "chaosbench";  // store key prefix, unique per run
  std::string host = "127.0.0.1";    // address to bind
  std::chrono::milliseconds timeout{0};  // a collective (or joining) that takes longer has failed
  std::chrono::milliseconds settle{300};     // elastic: how long survivors wait for each other
  // A step in progress longer than this ends the rank (step_watchdog.h); 0: no watchdog.
  std::chrono::milliseconds watchdog{0};
  // Replicas compare a hash of parameters and gradients every this many steps
  // (replica_check.h); 0: never.
  int sdc_check_every = 0;
  // Hybrid parallelism (train_settings.h); dp 0 follows the world. tp = pp = 1 is the
  // data-parallel trainer; anything else runs hybrid_rank.h.
  TrainSettings::Parallel parallel;
};

// The checkpoint writer's settings of `cfg`, writing into `dir` (the job's directory, or
// a hybrid shard's below it).
CheckpointConfig checkpoint_config(const TrainConfig& cfg, const std::string& dir);

// The parallel sizes of `cfg` with dp resolved (world / (tp × pp) when 0).
ParallelDims parallel_dims(const TrainConfig& cfg);

// The settings' part of a TrainConfig (everything but rank, world, attempt, rejoin, seed,
// store, prefix, host, settle and watchdog); an unset sdc_check_every becomes
// kDefaultSdcCheckEvery. `s.algorithm` must be one of the three (read_train_settings checks).
TrainConfig train_config(const TrainSettings& s);

// Why `cfg` cannot run ("batch_size 3 is smaller than world_size 4"), or nullopt.
std::optional<std::string> train_config_error(const TrainConfig& cfg);

}  // namespace chaosbench::bench::train
