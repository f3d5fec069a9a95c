// One rank of the built-in data-parallel trainer: an MLP on the synthetic regression set,
// gradients summed over ranks by a bucketed allreduce that overlaps backward, checkpoints
// by the lead rank, and recovery as the config says (train_config.h). Knows nothing of
// the harness or of command lines: it reports through the metrics wire protocol.
//
// What it sends (docs/metrics-protocol.md lists the fields):
//   sample compute/gemm_tflops                 once, at a first start (the mfu denominator)
//   sample compute/peak_tflops                 with it: the hardware's peak (the mfu_hw one)
//   samples train/loss, train/step_time, train/compute_time, train/comm_time,
//           train/data_time, train/forward_time, train/backward_time,
//           train/optimizer_time, train/cpu_time                              per step
//   event step {step, step_ms, compute_ms, comm_ms, comm_total_ms, samples, loss, flops,
//               world, generation, attempt}                                    per step
//   event train_start {step, world, generation, attempt, reason}
//   event failure_detected {step, error, reason[, code, xid]}  reason: collective,
//               device, sdc or hang (the watchdog)
//   event fault_injected {kind, step, ...}     what an armed GPU fault did (bit flips)
//   event sdc_detected {step, injected_ranks.., ranks, action}  replicas disagreed
//   events checkpoint_saved / checkpoint_restored / checkpoint_rejected, samples
//   ckpt/save_time, ckpt/size {kind}, ckpt/write_bw, ckpt/restore_time
//   event target_reached {step, loss}                                 when target_loss set
// Every rank reports every step; loss is the global mean, the same on every rank.
#pragma once

#include "bench/protocol/metrics_client.h"
#include "bench/train/train_config.h"

namespace chaosbench::bench::train {

inline constexpr int kTrainOk = 0;
inline constexpr int kTrainFailed = 1;     // a collective failed and recovery is not elastic
inline constexpr int kTrainBadConfig = 2;
inline constexpr int kTrainDeviceError = 3;  // a device call failed (an Xid-class error, out of memory)
inline constexpr int kTrainStopped = 143;  // SIGTERM, at a step boundary (128 + 15, as a shell says)

// Runs this rank to the last step (or its failure) and returns a process exit code.
// Blocking; never exits the process. SIGPIPE is ignored while it runs; SIGTERM stops it
// at the next step boundary, once the checkpoint in flight is written.
int run_trainer(const TrainConfig& cfg, MetricsClient& metrics);

}  // namespace chaosbench::bench::train
