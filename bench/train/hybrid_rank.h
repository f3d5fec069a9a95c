// One rank of the built-in trainer with tensor and pipeline parallelism: the
// rank's pipeline stage and TP shard of the MLP (stage_model.h), its microbatches run in
// the configured schedule (pipeline_schedule.h) with activations and their gradients sent
// stage to stage (hybrid_comm.h), the DP replicas' gradients of the same shard summed by
// the data-parallel trainer's bucketed reducer overlapping the last microbatch's backward,
// checkpoints per stage and TP shard, and the step's report with the rank's coordinates.
// run_trainer (trainer.h) runs it when tp or pp is above 1.
//
// Recovery: a failed collective or peer ends the rank with kTrainFailed after a
// failure_detected event, a step that hangs past the watchdog's limit with kTrainHung
// (step_watchdog.h); the harness's restart recovery starts every rank again, and they
// resume from the newest step every shard has a good checkpoint of. Elastic recovery is
// refused (train_config_error): a lost rank leaves its replica without a stage or shard.
// Threads: the rank's own; the checkpoint writer and the DP reducer have theirs.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <gloo/context.h>
#include <gloo/transport/device.h>

#include "bench/common/device_faults.h"
#include "bench/protocol/metrics_client.h"
#include "bench/train/batch_prefetcher.h"
#include "bench/checkpoint/checkpoint_loader.h"
#include "bench/checkpoint/checkpoint_writer.h"
#include "bench/compute/device.h"
#include "bench/train/comm/gradient_reducer.h"
#include "bench/train/comm/hybrid_comm.h"
#include "bench/compute/optimizer.h"
#include "bench/train/hybrid/parallel_layout.h"
#include "bench/train/hybrid/pipeline_schedule.h"
#include "bench/train/hybrid/stage_model.h"
#include "bench/train/step_watchdog.h"
#include "bench/compute/synthetic_data.h"
#include "bench/train/train_config.h"
#include "bench/train/train_state.h"

namespace chaosbench::bench::train {

class HybridRank {
 public:
  // cfg must have passed train_config_error(). Throws what the device or model throws.
  HybridRank(const TrainConfig& cfg, MetricsClient& metrics);
  ~HybridRank();

  // Trains to the last step; returns the process exit code (trainer.h). `stop` is the
  // SIGTERM flag: the ranks agree on it at every step boundary.
  int run(const std::atomic<int>& stop);

 private:
  // Where a step's time went, for the step event and the samples.
  struct StepTimes {
    double step_ms = 0, data_ms = 0, busy_ms = 0, dp_ms = 0, dp_total_ms = 0, optimizer_ms = 0, cpu_ms = 0;
    GroupTraffic traffic;
    std::uint64_t dp_bytes = 0;
    double loss = 0;
  };

  void release_buffers();
  void connect();
  void restore_checkpoint();
  std::vector<std::int64_t> gather_steps(std::int64_t mine);
  std::int64_t load_newest(std::optional<std::int64_t> at_most, std::optional<LoadResult>& loaded);
  void load_batch();
  void make_batch(std::uint64_t first, int count, std::vector<float>& x, std::vector<float>& y) const;
  void step_once(bool stop);
  void run_pipeline(StepTimes& t);
  void reduce_and_update(StepTimes& t);
  void report(const StepTimes& t);
  void maybe_checkpoint();
  void report_saves();
  int fail(const std::string& error);
  void log(const std::string& line) const;
  Labels coords_labels() const;
  std::string shard_dir() const;

  const TrainConfig& cfg_;
  MetricsClient& metrics_;
  ParallelLayout layout_;
  RankCoords me_;
  PipelineSchedule schedule_;
  std::shared_ptr<DeviceFaults> faults_;  // GPU and collective faults the harness arms
  int microbatches_, micro_size_;  // per replica and step; samples in each
  std::unique_ptr<Device> device_;
  StepWatchdog watchdog_;
  StageModel model_;
  Optimizer optimizer_;
  SyntheticDataset data_;
  TrainState state_;
  std::vector<PipelineOp> ops_;
  float* x_ = nullptr;  // the replica's step batch on the device: inputs, targets
  float* y_ = nullptr;
  // Per microbatch: the previous stage's activations (stage > 0) and dL/d(stage output)
  // (the next stage's gradient, or the loss's).
  std::vector<float*> inputs_, output_grads_;
  std::vector<float> hx_, hy_;
  // The next step's batch, made by the prefetcher while this step runs; `prefetched_` is
  // the step it is for, -1 when none. Declared after what it writes, so the destructor
  // joins it first.
  std::vector<float> next_hx_, next_hy_;
  std::int64_t prefetched_ = -1;
  BatchPrefetcher prefetcher_;

  std::unique_ptr<HybridComm> comm_;
  std::unique_ptr<RendezvousStore> dp_store_;
  std::shared_ptr<gloo::transport::Device> dp_transport_;  // gloo's ring or bcube only
  std::shared_ptr<gloo::Context> dp_context_;
  std::unique_ptr<GradientReducer> reducer_;
  std::unique_ptr<CheckpointWriter> writer_;
  CheckpointState snapshot_;
  std::int64_t step_ = 0;
  bool target_reported_ = false;
  bool stop_agreed_ = false;
};

}  // namespace chaosbench::bench::train
