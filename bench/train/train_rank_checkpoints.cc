// TrainRank's checkpoints (train_rank.h): the newest good one restored at a start, saves
// by the leader at the configured interval, and what the writer reports of them.
#include <chrono>

#include <fmt/format.h>

#include "bench/checkpoint/checkpoint_loader.h"
#include "bench/train/train_rank.h"

namespace chaosbench::bench::train {

void TrainRank::restore_checkpoint() {
  if (cfg_.checkpoint_dir.empty()) return;
  std::vector<RejectedCheckpoint> rejected;
  auto loaded = load_latest_checkpoint(cfg_.checkpoint_dir, state_.model_key(), &rejected, model_.param_count());
  for (const auto& r : rejected) {
    metrics_.event("checkpoint_rejected", {{"step", r.step}, {"file", r.file}, {"reason", r.reason}});
    log(fmt::format("checkpoint {} rejected: {}", r.file, r.reason));
  }
  if (!loaded) return;
  state_.restore(loaded->state);
  step_ = loaded->state.step;
  metrics_.sample("ckpt/restore_time", loaded->ms, "ms");
  metrics_.event("checkpoint_restored", {{"step", step_}, {"ms", loaded->ms}, {"file", loaded->file},
                                         {"fallback", static_cast<std::int64_t>(rejected.empty() ? 0 : 1)}});
  log(fmt::format("restored step {} from {} in {:.1f} ms{}", step_, loaded->file, loaded->ms,
                  rejected.empty() ? "" : fmt::format(" (after rejecting {} newer)", rejected.size())));
}

// The leader writes checkpoints; in elastic mode the leader can change, and the new one
// takes over the same directory.
void TrainRank::maybe_checkpoint() {
  report_saves();
  if (cfg_.checkpoint_every <= 0 || step_ % cfg_.checkpoint_every != 0 || !leader()) return;
  if (!writer_) writer_ = std::make_unique<CheckpointWriter>(checkpoint_config(cfg_, cfg_.checkpoint_dir));
  const auto t0 = Clock::now();
  state_.snapshot(step_, snapshot_);
  writer_->save(snapshot_);
  // Blocked: the copy off the device plus the writer's own snapshot (and, when not async
  // or still busy, the write).
  const double blocking_ms = ms_between(t0, Clock::now());
  metrics_.sample("ckpt/save_time", blocking_ms, "ms");
  pending_blocking_ms_.push_back(blocking_ms);
  if (!cfg_.checkpoint_async) report_saves();
}

void TrainRank::report_saves() {
  if (!writer_) return;
  for (const auto& r : writer_->completed()) {
    double blocking = 0;
    if (!pending_blocking_ms_.empty()) {
      blocking = pending_blocking_ms_.front();
      pending_blocking_ms_.erase(pending_blocking_ms_.begin());
    }
    if (!r.error.empty()) {
      metrics_.event("checkpoint_failed", {{"step", r.step}, {"error", r.error}});
      log(fmt::format("checkpoint at step {} failed: {}", r.step, r.error));
      continue;
    }
    const std::string kind = r.full ? "full" : "delta";
    metrics_.sample("ckpt/size", static_cast<double>(r.bytes), "bytes", {{"kind", kind}});
    if (r.write_ms > 0) metrics_.sample("ckpt/write_bw", static_cast<double>(r.bytes) / (r.write_ms * 1e-3) / 1e9, "GB/s");
    metrics_.event("checkpoint_saved", {{"step", r.step}, {"kind", kind}, {"bytes", static_cast<std::int64_t>(r.bytes)},
                                        {"raw_bytes", static_cast<std::int64_t>(r.raw_bytes)}, {"blocking_ms", blocking},
                                        {"write_ms", r.write_ms}});
  }
}

}  // namespace chaosbench::bench::train
