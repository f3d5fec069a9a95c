// HybridRank's life (hybrid_rank.h): set-up, connection, the checkpoint every shard
// agrees on, the step loop and its end. The step itself is in hybrid_rank_step.cc.
#include "bench/train/hybrid_rank.h"

#include <algorithm>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <gloo/rendezvous/context.h>
#include <gloo/transport/tcp/device.h>

#include "bench/common/device_error.h"
#include "bench/common/device_faults.h"
#include "bench/common/thread_priority.h"
#include "bench/checkpoint/checkpoint_loader.h"
#include "bench/train/device_factory.h"
#include "bench/train/fault_injecting_device.h"
#include "bench/compute/gemm_peak.h"
#include "bench/train/comm/tcp_ring_reducer.h"
#include "bench/train/train_rank.h"
#include "bench/train/trainer.h"

namespace chaosbench::bench::train {
namespace {

// Extras riding with the DP reducer's first bucket: none are needed (the loss and the stop
// flag go round the world once per step), but the reducers carry at least one.
constexpr std::size_t kDpExtras = 1;

int slots_for(PipelineSchedule schedule, int stage, int stages, int microbatches) {
  // 1F1B holds at most p − s microbatches (its warm-up plus the one in steady state).
  return schedule == PipelineSchedule::kGpipe ? microbatches : std::min(microbatches, stages - stage);
}

}  // namespace

HybridRank::HybridRank(const TrainConfig& cfg, MetricsClient& metrics)
    : cfg_(cfg), metrics_(metrics), layout_(parallel_dims(cfg)), me_(layout_.coords(cfg.rank)),
      schedule_(parse_pipeline_schedule(cfg.parallel.schedule).value_or(PipelineSchedule::kOneFOneB)),
      faults_(open_device_faults(cfg.rank)), microbatches_(cfg.parallel.microbatches),
      micro_size_(cfg.batch_size / layout_.dims().dp / cfg.parallel.microbatches),
      device_(with_faults(make_device(cfg.device, cfg.threads), faults_)), watchdog_(cfg.watchdog, cfg.rank),
      model_(*device_, cfg.layers, plan_stages(cfg.layers, layout_.dims().pp, layout_.dims().tp)[me_.pp_stage],
             layout_.dims().tp, me_.tp_rank, micro_size_,
             slots_for(schedule_, me_.pp_stage, layout_.dims().pp, microbatches_), kDpExtras),
      optimizer_(*device_, cfg.optimizer, model_.param_count()), data_(cfg.layers.front(), cfg.layers.back(), cfg.seed),
      state_(*device_, model_.params(), model_.param_count(), optimizer_,
             fmt::format("{} tp{}/{} pp{}/{}", model_key(cfg), me_.tp_rank, layout_.dims().tp, me_.pp_stage,
                         layout_.dims().pp)),
      ops_(stage_ops(schedule_, me_.pp_stage, layout_.dims().pp, microbatches_)) {
  model_.init(cfg.seed);
  const auto samples = static_cast<std::size_t>(micro_size_) * static_cast<std::size_t>(microbatches_);
  try {  // a throwing constructor runs no destructor: what was allocated goes back here
    x_ = device_->allocate(samples * static_cast<std::size_t>(data_.input_dim()));
    y_ = device_->allocate(samples * static_cast<std::size_t>(data_.output_dim()));
    const auto rows = static_cast<std::size_t>(micro_size_);
    for (int mb = 0; mb < microbatches_; ++mb) {
      inputs_.push_back(model_.first_stage() ? nullptr
                                             : device_->allocate(rows * static_cast<std::size_t>(model_.input_width())));
      output_grads_.push_back(device_->allocate(rows * static_cast<std::size_t>(model_.output_width())));
    }
  } catch (...) {
    release_buffers();
    throw;
  }
  hx_.resize(samples * static_cast<std::size_t>(data_.input_dim()));
  hy_.resize(samples * static_cast<std::size_t>(data_.output_dim()));
  next_hx_.resize(hx_.size());
  next_hy_.resize(hy_.size());
}

void HybridRank::release_buffers() {
  for (float* p : {x_, y_})
    if (p != nullptr) device_->release(p);
  for (auto* buffers : {&inputs_, &output_grads_})
    for (float* p : *buffers)
      if (p != nullptr) device_->release(p);
  x_ = y_ = nullptr;
  inputs_.clear();
  output_grads_.clear();
}

HybridRank::~HybridRank() {
  reducer_.reset();  // joins its threads before the buffers go
  writer_.reset();
  release_buffers();
}

void HybridRank::log(const std::string& line) const {
  fmt::print(stderr, "rank {} (tp {} pp {} dp {}): {}\n", cfg_.rank, me_.tp_rank, me_.pp_stage, me_.dp_rank, line);
}

Labels HybridRank::coords_labels() const {
  return {{"tp_rank", static_cast<std::int64_t>(me_.tp_rank)},
          {"pp_stage", static_cast<std::int64_t>(me_.pp_stage)},
          {"dp_rank", static_cast<std::int64_t>(me_.dp_rank)}};
}

std::string HybridRank::shard_dir() const {
  return fmt::format("{}/stage{}-tp{}", cfg_.checkpoint_dir, me_.pp_stage, me_.tp_rank);
}

void HybridRank::connect() {
  const std::string prefix = fmt::format("{}/a{}", cfg_.prefix, cfg_.attempt);
  // The largest message: a microbatch's activations (or a TP part) at the widest layer.
  const std::size_t widest = static_cast<std::size_t>(*std::max_element(cfg_.layers.begin(), cfg_.layers.end()));
  comm_ = std::make_unique<HybridComm>(layout_, cfg_.rank, cfg_.store, prefix, cfg_.host, cfg_.timeout,
                                       widest * static_cast<std::size_t>(micro_size_), faults_);
  const int dp = layout_.dims().dp;
  if (dp < 2) return;
  // The replicas of this rank's shard: same stage, same TP rank.
  const std::string key = fmt::format("{}/dp{}-{}", prefix, me_.pp_stage, me_.tp_rank);
  dp_store_ = make_store(cfg_.store, key);
  if (cfg_.algorithm == AllreduceAlgorithm::kTcpRing) {
    reducer_ = std::make_unique<TcpRingReducer>(dp_store_->store(), "ring", me_.dp_rank, dp, cfg_.host,
                                                model_.grads(), model_.spans(), cfg_.bucket_bytes, cfg_.timeout,
                                                kDpExtras, model_.grad_tail(), faults_);
    return;
  }
  gloo::transport::tcp::attr attr;
  attr.hostname = cfg_.host;
  {
    const ScopedThreadNice nice(kCommThreadNice);  // gloo's transport thread moves the bytes
    dp_transport_ = gloo::transport::tcp::CreateDevice(attr);
  }
  auto context = std::make_shared<gloo::rendezvous::Context>(me_.dp_rank, dp);
  context->setTimeout(cfg_.timeout);
  context->connectFullMesh(dp_store_->store(), dp_transport_);
  dp_context_ = context;
  reducer_ = std::make_unique<GradientAllreducer>(dp_context_, model_.grads(), model_.spans(), cfg_.bucket_bytes,
                                                  cfg_.timeout, kDpExtras, cfg_.algorithm, faults_,
                                                  model_.grad_tail());
}

// Every rank's step, summed into its own slot: each rank learns every other's, so all
// take the same decisions below (and make the same number of calls).
std::vector<std::int64_t> HybridRank::gather_steps(std::int64_t mine) {
  std::vector<double> steps(static_cast<std::size_t>(layout_.world()), 0.0);
  steps[static_cast<std::size_t>(cfg_.rank)] = static_cast<double>(mine);
  comm_->world_sum(steps);
  return {steps.begin(), steps.end()};
}

// This shard's newest good checkpoint (at most `at_most`), its rejections reported;
// returns its step, 0 for none.
std::int64_t HybridRank::load_newest(std::optional<std::int64_t> at_most, std::optional<LoadResult>& loaded) {
  std::vector<RejectedCheckpoint> rejected;
  loaded = load_latest_checkpoint(shard_dir(), state_.model_key(), &rejected, model_.param_count(), at_most);
  for (const auto& r : rejected) {
    metrics_.event("checkpoint_rejected", {{"step", r.step}, {"file", r.file}, {"reason", r.reason}});
    log(fmt::format("checkpoint {} rejected: {}", r.file, r.reason));
  }
  return loaded ? loaded->state.step : 0;
}

// Each shard has its own directory; shards' writers run apart, so one may hold a newer
// step than another when the job died, and a damaged file may leave one shard older
// still. In rounds, until all agree: every rank says its step, and those ahead of the
// oldest load their newest at most that one. Every rank sees the same steps, so all take
// the same number of rounds; the steps only go down, so the rounds end (at 0: afresh).
void HybridRank::restore_checkpoint() {
  if (cfg_.checkpoint_dir.empty()) return;
  std::optional<LoadResult> loaded;
  std::int64_t mine = load_newest(std::nullopt, loaded);
  const std::int64_t first = mine;
  for (;;) {
    const auto steps = gather_steps(mine);
    const std::int64_t oldest = *std::min_element(steps.begin(), steps.end());
    if (oldest == *std::max_element(steps.begin(), steps.end())) break;
    log(fmt::format("shards hold steps {}: going back to {}", fmt::join(steps, ","), oldest));
    if (mine > oldest) mine = load_newest(oldest, loaded);
  }
  if (mine <= 0 || !loaded) return;  // the state init() made
  state_.restore(loaded->state);
  step_ = mine;
  metrics_.sample("ckpt/restore_time", loaded->ms, "ms", coords_labels());
  metrics_.event("checkpoint_restored", {{"step", step_}, {"ms", loaded->ms}, {"file", loaded->file},
                                         {"fallback", static_cast<std::int64_t>(mine == first ? 0 : 1)}});
  log(fmt::format("restored step {} from {}/{} in {:.1f} ms", step_, shard_dir(), loaded->file, loaded->ms));
}

int HybridRank::fail(const std::string& error) {
  log(error);
  metrics_.event("failure_detected", {{"error", error}, {"reason", std::string("collective")}, {"step", step_}});
  if (writer_) writer_->wait();
  report_saves();
  metrics_.flush();
  return kTrainFailed;
}

int HybridRank::run(const std::atomic<int>& stop) {
  const auto& d = layout_.dims();
  if (cfg_.attempt == 0) {
    const double tflops = measure_gemm_tflops(*device_);
    metrics_.sample("compute/gemm_tflops", tflops, "TFLOP/s", {{"dtype", std::string("fp32")}});
    const double hardware = device_->peak_tflops();
    if (hardware > 0) metrics_.sample("compute/peak_tflops", hardware, "TFLOP/s", {{"dtype", std::string("fp32")}});
  }
  try {
    connect();
    restore_checkpoint();
  } catch (const DeviceError&) {
    throw;  // run_trainer reports it
  } catch (const std::exception& e) {
    return fail(fmt::format("start: {}", e.what()));
  }
  Labels start{{"step", step_}, {"world", static_cast<std::int64_t>(d.world())}, {"generation", std::int64_t{0}},
               {"attempt", static_cast<std::int64_t>(cfg_.attempt)},
               {"reason", std::string(step_ > 0 ? "restored" : "fresh")}};
  start.merge(coords_labels());
  metrics_.event("train_start", std::move(start));
  metrics_.flush();
  log(fmt::format("training from step {}: tp {} × pp {} × dp {}, {} microbatches of {} ({}), stage layers {}",
                  step_, d.tp, d.pp, d.dp, microbatches_, micro_size_, to_string(schedule_), model_.layers()));
  while (step_ < cfg_.steps) {
    if (stop_agreed_) {
      log(fmt::format("stopped by SIGTERM after step {}", step_));
      if (writer_) writer_->wait();
      report_saves();
      metrics_.flush();
      return kTrainStopped;
    }
    try {
      // The watchdog covers the step and the checkpoint snapshot after it.
      watchdog_.begin_step(step_ + 1);
      step_once(stop.load() != 0);
      maybe_checkpoint();
      watchdog_.end_step();
    } catch (const DeviceError& e) {
      watchdog_.end_step();
      if (e.source() == DeviceError::Source::kDevice) throw;
      return fail(e.what());
    } catch (const std::exception& e) {
      watchdog_.end_step();
      return fail(e.what());
    }
  }
  if (writer_) writer_->wait();
  report_saves();
  try {
    std::vector<double> none;
    comm_->world_sum(none);  // a barrier: nobody leaves while a peer still waits for its last message
  } catch (const std::exception& e) {
    log(fmt::format("final barrier: {}", e.what()));
  }
  metrics_.flush();
  return kTrainOk;
}

void HybridRank::maybe_checkpoint() {
  report_saves();
  if (cfg_.checkpoint_every <= 0 || step_ % cfg_.checkpoint_every != 0 || me_.dp_rank != 0) return;
  if (!writer_) writer_ = std::make_unique<CheckpointWriter>(checkpoint_config(cfg_, shard_dir()));
  const auto t0 = Clock::now();
  state_.snapshot(step_, snapshot_);
  writer_->save(snapshot_);
  metrics_.sample("ckpt/save_time", ms_between(t0, Clock::now()), "ms", coords_labels());
  if (!cfg_.checkpoint_async) report_saves();
}

void HybridRank::report_saves() {
  if (!writer_) return;
  for (const auto& r : writer_->completed()) {
    if (!r.error.empty()) {
      metrics_.event("checkpoint_failed", {{"step", r.step}, {"error", r.error}});
      continue;
    }
    const std::string kind = r.full ? "full" : "delta";
    Labels labels = coords_labels();
    labels.emplace("kind", kind);
    metrics_.sample("ckpt/size", static_cast<double>(r.bytes), "bytes", labels);
    metrics_.event("checkpoint_saved", {{"step", r.step}, {"kind", kind}, {"bytes", static_cast<std::int64_t>(r.bytes)},
                                        {"raw_bytes", static_cast<std::int64_t>(r.raw_bytes)},
                                        {"write_ms", r.write_ms}, {"pp_stage", static_cast<std::int64_t>(me_.pp_stage)},
                                        {"tp_rank", static_cast<std::int64_t>(me_.tp_rank)}});
  }
}

}  // namespace chaosbench::bench::train
