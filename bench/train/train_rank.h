// One rank of the built-in trainer as an object: the state run_trainer (trainer.h) drives
// step by step, split over trainer.cc (the step loop, connection, start and finish),
// train_rank_recovery.cc (replica checks, device and collective failures, elastic
// recovery) and train_rank_checkpoints.cc (saving and restoring). Internal to
// bench/train. Threads: the rank's own; the checkpoint writer and the watchdog have theirs.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <gloo/context.h>
#include <gloo/transport/device.h>

#include "bench/rendezvous/rendezvous.h"
#include "bench/common/device_error.h"
#include "bench/common/device_faults.h"
#include "bench/protocol/metrics_client.h"
#include "bench/checkpoint/checkpoint_writer.h"
#include "bench/train/device_factory.h"
#include "bench/train/fault_injecting_device.h"
#include "bench/train/comm/gradient_reducer.h"
#include "bench/train/membership/membership.h"
#include "bench/compute/mlp_model.h"
#include "bench/compute/optimizer.h"
#include "bench/train/replica_check.h"
#include "bench/train/step_watchdog.h"
#include "bench/compute/synthetic_data.h"
#include "bench/train/train_config.h"
#include "bench/train/train_state.h"
#include "bench/train/trainer.h"

namespace chaosbench::bench::train {

using Clock = std::chrono::steady_clock;
// Extras riding with the first gradient bucket: the shard's squared-error sum, the
// number of ranks waiting to join (only the leader's is non-zero), then one replica
// fingerprint slot per member (replica_check.h).
constexpr std::size_t kExtraLoss = 0, kExtraJoiners = 1, kExtraFingerprints = 2;

// Replicas disagree and no majority says which state is good: not recoverable in memory.
class UnrecoverableCorruption : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

inline double ms_between(Clock::time_point a, Clock::time_point b) {
  return std::chrono::duration<double, std::milli>(b - a).count();
}

inline std::string model_key(const TrainConfig& cfg) {
  return fmt::format("mlp {} {}", fmt::join(cfg.layers, "-"), cfg.optimizer.kind);
}

// failure_detected {reason: device, code, xid[, step]}: what the harness recovers from
// and gpu/xid_events counts.
void report_device_error(MetricsClient& metrics, const DeviceError& e, std::optional<std::int64_t> step);

// The GPU and collective faults the harness arms for `rank` (null when none); why they
// are off, when they are, goes to stderr.
std::shared_ptr<DeviceFaults> open_device_faults(int rank);

// CPU time of the whole process, every thread (compute, communication, gloo's own), in ms:
// train/cpu_time.
double process_cpu_ms();

class TrainRank {
 public:
  TrainRank(const TrainConfig& cfg, MetricsClient& metrics)
      : cfg_(cfg), metrics_(metrics), faults_(open_device_faults(cfg.rank)),
        device_(with_faults(make_device(cfg.device, cfg.threads), faults_)), watchdog_(cfg.watchdog, cfg.rank),
        model_(*device_, cfg.layers, cfg.batch_size, extras_count(cfg)), optimizer_(*device_, cfg.optimizer, model_.param_count()),
        data_(cfg.layers.front(), cfg.layers.back(), cfg.seed),
        state_(*device_, model_, optimizer_, model_key(cfg)) {
    model_.init(cfg.seed);
    x_ = device_->allocate(static_cast<std::size_t>(cfg.batch_size) * static_cast<std::size_t>(data_.input_dim()));
    y_ = device_->allocate(static_cast<std::size_t>(cfg.batch_size) * static_cast<std::size_t>(data_.output_dim()));
    dout_ = device_->allocate(static_cast<std::size_t>(cfg.batch_size) * static_cast<std::size_t>(data_.output_dim()));
    hx_.resize(static_cast<std::size_t>(cfg.batch_size) * static_cast<std::size_t>(data_.input_dim()));
    hy_.resize(static_cast<std::size_t>(cfg.batch_size) * static_cast<std::size_t>(data_.output_dim()));
    if (cfg.recovery == RecoveryMode::kElastic)
      elastic_ = std::make_unique<MembershipStore>(
          open_membership_backend(cfg.store, fmt::format("{}-a{}.elastic", cfg.prefix, cfg.attempt)), cfg.rank,
          cfg.settle);
  }
  ~TrainRank() {
    allreducer_.reset();
    for (float* p : {x_, y_, dout_}) device_->release(p);
  }

  int run();

 private:
  void connect(const Membership& m);
  void disconnect();
  void start(const char* reason);
  void restore_checkpoint();
  bool step_once();
  void local_gradients_done(int layer);
  void after_step(const StepComm& comm);
  void maybe_checkpoint();
  void report_saves();
  bool recover(const std::string& error);
  bool rejoin(int after);
  void resize(std::vector<int> joiners);
  void finish();
  int leave(int code);
  static std::size_t extras_count(const TrainConfig& cfg) {
    return kExtraFingerprints + kFingerprintFloats * static_cast<std::size_t>(cfg.world_size);
  }
  std::size_t extras_count() const { return extras_count(cfg_); }
  bool sdc_check_due() const { return cfg_.sdc_check_every > 0 && step_ % cfg_.sdc_check_every == 0; }
  bool check_replicas(const StepComm& comm);
  void inject_bitflip(cb_bitflip_tensor tensor, float* buffer, std::size_t offset, std::size_t n, std::int64_t step) {
    apply_bitflip(faults_ ? faults_->bitflip(tensor) : std::nullopt, tensor, buffer, offset, n, step);
  }
  void apply_bitflip(const std::optional<BitflipShot>& shot, cb_bitflip_tensor tensor, float* buffer,
                     std::size_t offset, std::size_t n, std::int64_t step);
  struct Reduced {
    StepComm comm;
    bool updated = false;    // the optimizer ran bucket by bucket already
    double updates_ms = 0;   // its time inside the allreduce's wait
  };
  Reduced reduce_and_update(bool overlap);
  int device_failed(const DeviceError& e);
  bool collective_failed(const std::string& error, const char* reason, int code);
  void log(const std::string& line) const { fmt::print(stderr, "rank {}: {}\n", cfg_.rank, line); }
  bool leader() const { return membership_.leader() == cfg_.rank; }

  const TrainConfig& cfg_;
  MetricsClient& metrics_;
  std::shared_ptr<DeviceFaults> faults_;  // GPU and collective faults the harness arms
  std::unique_ptr<Device> device_;
  StepWatchdog watchdog_;
  MlpModel model_;
  Optimizer optimizer_;
  SyntheticDataset data_;
  TrainState state_;
  float* x_ = nullptr;
  float* y_ = nullptr;
  float* dout_ = nullptr;
  std::vector<float> hx_, hy_;
  std::optional<std::uint64_t> fingerprint_;  // of the state after step_, to send next step
  std::vector<float> scratch_;

  std::unique_ptr<MembershipStore> elastic_;
  Membership membership_;
  std::shared_ptr<gloo::transport::Device> transport_;
  std::unique_ptr<RendezvousStore> store_;
  std::shared_ptr<gloo::Context> context_;
  std::unique_ptr<GradientReducer> allreducer_;
  std::unique_ptr<CheckpointWriter> writer_;
  CheckpointState snapshot_;

  std::int64_t step_ = 0;  // optimizer steps completed
  double step_ms_ = 0, compute_ms_ = 0;
  // Where the step's wall time went (train/data_time ... train/optimizer_time), and the
  // CPU time of the whole process (every thread) during it (train/cpu_time).
  struct StepParts {
    double data_ms = 0, forward_ms = 0, backward_ms = 0, optimizer_ms = 0, cpu_ms = 0;
  } parts_;
  int samples_ = 0;
  bool pending_joiners_ = false;  // the leader saw ranks waiting to join, during this step
  std::vector<double> pending_blocking_ms_;  // per save not yet reported as written
  std::vector<int> joiners_seen_;
  bool target_reported_ = false;
  std::string where_;
};

}  // namespace chaosbench::bench::train
