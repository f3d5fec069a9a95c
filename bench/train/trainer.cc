#include "bench/train/trainer.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <memory>
#include <optional>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <gloo/allreduce.h>
#include <gloo/barrier.h>
#include <gloo/math.h>
#include <gloo/rendezvous/context.h>
#include <gloo/transport/tcp/device.h>

#include "bench/collective/rendezvous.h"
#include "bench/common/scoped_signal.h"
#include "bench/common/thread_priority.h"
#include "bench/train/checkpoint_loader.h"
#include "bench/train/checkpoint_writer.h"
#include "bench/train/cpu_device.h"
#include "bench/train/gemm_peak.h"
#include "bench/train/grad_allreducer.h"
#include "bench/train/membership.h"
#include "bench/train/synthetic_data.h"
#include "bench/train/train_state.h"

namespace chaosbench::bench::train {
namespace {

using Clock = std::chrono::steady_clock;
constexpr std::uint32_t kControlTag = 600;
// Extras riding with the first gradient bucket: the shard's squared-error sum, and the
// number of ranks waiting to join (only the leader's is non-zero).
constexpr std::size_t kExtraLoss = 0, kExtraJoiners = 1, kExtras = 2;
// Consecutive failed recoveries before an elastic rank gives up.
constexpr int kMaxRecoveryTries = 5;
// How long a returning rank waits to be admitted.
constexpr auto kAdmissionTimeout = std::chrono::minutes(10);

// SIGTERM (the harness stopping every rank for a restart, as torchrun does) ends the
// rank at the next step boundary, after the checkpoint being written is on disk; a rank
// stuck in a collective gets SIGKILL from the harness after its grace period.
std::atomic<int> g_stop_requested{0};
static_assert(std::atomic<int>::is_always_lock_free, "the SIGTERM handler stores to it");

extern "C" void on_sigterm(int) { g_stop_requested = 1; }

double ms_between(Clock::time_point a, Clock::time_point b) {
  return std::chrono::duration<double, std::milli>(b - a).count();
}

std::string model_key(const TrainConfig& cfg) {
  return fmt::format("mlp {} {}", fmt::join(cfg.layers, "-"), cfg.optimizer.kind);
}

class Trainer {
 public:
  Trainer(const TrainConfig& cfg, MetricsClient& metrics)
      : cfg_(cfg), metrics_(metrics), device_(make_cpu_device(cfg.threads)),
        model_(*device_, cfg.layers, cfg.batch_size), optimizer_(*device_, cfg.optimizer, model_.param_count()),
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
          fmt::format("{}/{}-a{}.elastic", store_directory(cfg.store), cfg.prefix, cfg.attempt), cfg.rank, cfg.settle);
  }
  ~Trainer() {
    allreducer_.reset();
    for (float* p : {x_, y_, dout_}) device_->release(p);
  }

  int run();

 private:
  void connect(const Membership& m);
  void disconnect();
  void start(const char* reason);
  void restore_checkpoint();
  void step_once();
  void after_step(const StepComm& comm);
  void maybe_checkpoint();
  void report_saves();
  bool recover(const std::string& error);
  bool rejoin(int after);
  void resize(std::vector<int> joiners);
  void finish();
  void log(const std::string& line) const { fmt::print(stderr, "rank {}: {}\n", cfg_.rank, line); }
  bool leader() const { return membership_.leader() == cfg_.rank; }

  const TrainConfig& cfg_;
  MetricsClient& metrics_;
  std::unique_ptr<Device> device_;
  MlpModel model_;
  Optimizer optimizer_;
  SyntheticDataset data_;
  TrainState state_;
  float* x_ = nullptr;
  float* y_ = nullptr;
  float* dout_ = nullptr;
  std::vector<float> hx_, hy_;

  std::unique_ptr<MembershipStore> elastic_;
  Membership membership_;
  std::shared_ptr<gloo::transport::Device> transport_;
  std::unique_ptr<RendezvousStore> store_;
  std::shared_ptr<gloo::Context> context_;
  std::unique_ptr<GradientAllreducer> allreducer_;
  std::unique_ptr<CheckpointWriter> writer_;
  CheckpointState snapshot_;

  std::int64_t step_ = 0;  // optimizer steps completed
  double step_ms_ = 0, compute_ms_ = 0;
  int samples_ = 0;
  bool pending_joiners_ = false;  // the leader saw ranks waiting to join, during this step
  std::vector<double> pending_blocking_ms_;  // per save not yet reported as written
  std::vector<int> joiners_seen_;
  bool target_reported_ = false;
  std::string where_;
};

void Trainer::connect(const Membership& m) {
  if (m.index_of(cfg_.rank) < 0)
    throw CollectiveError(fmt::format("this rank is not a member of generation {} ({})", m.generation,
                                      fmt::join(m.members, ",")));
  // A new generation may have another leader: the checkpoint writer in flight finishes,
  // and a later leader starts from the manifest on disk, so two writers never hold
  // diverging copies of it.
  if (writer_) {
    writer_->wait();
    report_saves();
    writer_.reset();
  }
  membership_ = m;
  if (m.members.size() < 2) return;  // one rank: nothing to talk to
  where_ = fmt::format("rendezvous of generation {} via {}", m.generation, cfg_.store);
  if (!transport_) {
    gloo::transport::tcp::attr attr;
    attr.hostname = cfg_.host;
    // gloo's transport thread (created here) moves the bytes: it gets the communication
    // priority too.
    const ScopedThreadNice nice(kCommThreadNice);
    transport_ = gloo::transport::tcp::CreateDevice(attr);
  }
  store_ = make_store(cfg_.store, fmt::format("{}/a{}/g{}", cfg_.prefix, cfg_.attempt, m.generation));
  auto context = std::make_shared<gloo::rendezvous::Context>(m.index_of(cfg_.rank), static_cast<int>(m.members.size()));
  context->setTimeout(cfg_.timeout);
  context->connectFullMesh(store_->store(), transport_);
  context_ = context;
  allreducer_ = std::make_unique<GradientAllreducer>(context_, model_.grads(), model_.spans(), cfg_.bucket_bytes,
                                                     cfg_.timeout, kExtras, cfg_.algorithm);
  where_.clear();
}

void Trainer::disconnect() {
  allreducer_.reset();  // joins the comm thread first: it holds the context
  context_.reset();     // closes every connection, so the peers notice now
  store_.reset();
}

void Trainer::start(const char* reason) {
  metrics_.event("train_start", {{"step", step_}, {"world", static_cast<std::int64_t>(membership_.members.size())},
                                 {"generation", static_cast<std::int64_t>(membership_.generation)},
                                 {"attempt", static_cast<std::int64_t>(cfg_.attempt)}, {"reason", std::string(reason)}});
  metrics_.flush();
  log(fmt::format("training from step {} ({}; generation {}, {} ranks: {})", step_, reason, membership_.generation,
                  membership_.members.size(), fmt::join(membership_.members, ",")));
}

void Trainer::restore_checkpoint() {
  if (cfg_.checkpoint_dir.empty()) return;
  std::vector<RejectedCheckpoint> rejected;
  auto loaded = load_latest_checkpoint(cfg_.checkpoint_dir, state_.model_key(), &rejected);
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

void Trainer::step_once() {
  const auto t0 = Clock::now();
  const int n = static_cast<int>(membership_.members.size());
  const int idx = membership_.index_of(cfg_.rank);
  // This rank's shard of the global batch: the first (batch % n) ranks take one more.
  const int base = cfg_.batch_size / n, extra = cfg_.batch_size % n;
  const int count = base + (idx < extra ? 1 : 0);
  const std::uint64_t first = static_cast<std::uint64_t>(step_) * static_cast<std::uint64_t>(cfg_.batch_size) +
                              static_cast<std::uint64_t>(idx * base + std::min(idx, extra));
  data_.batch(first, count, hx_.data(), hy_.data());
  const std::size_t in = static_cast<std::size_t>(count) * static_cast<std::size_t>(data_.input_dim());
  const std::size_t out = static_cast<std::size_t>(count) * static_cast<std::size_t>(data_.output_dim());
  device_->from_host(x_, hx_.data(), in);
  device_->from_host(y_, hy_.data(), out);
  const float* pred = model_.forward(x_, count);
  // Loss = mean squared error over the global batch; each shard's gradient carries its
  // share, so the allreduced sum is the exact global gradient.
  const float scale = 1.0f / (static_cast<float>(cfg_.batch_size) * static_cast<float>(data_.output_dim()));
  const double sq = device_->squared_error(pred, y_, out, scale, dout_);
  std::vector<float> extras(kExtras, 0.0f);
  extras[kExtraLoss] = static_cast<float>(sq);
  joiners_seen_.clear();
  if (elastic_ && leader()) {
    joiners_seen_ = elastic_->pending_joiners(membership_);
    extras[kExtraJoiners] = static_cast<float>(joiners_seen_.size());
  }
  StepComm comm;
  if (allreducer_) {
    allreducer_->begin_step(extras);
    model_.backward(x_, dout_, count, [&](int layer) { allreducer_->layer_done(layer); });
    const auto backward_end = Clock::now();
    comm = allreducer_->finish();
    compute_ms_ = ms_between(t0, backward_end);
  } else {
    model_.backward(x_, dout_, count, [](int) {});
    comm.extras = extras;
    compute_ms_ = ms_between(t0, Clock::now());
  }
  const auto opt_start = Clock::now();
  optimizer_.step(model_.params(), model_.grads(), 1.0f);
  device_->synchronize();
  ++step_;
  const auto t1 = Clock::now();
  compute_ms_ += ms_between(opt_start, t1);
  step_ms_ = ms_between(t0, t1);
  samples_ = count;
  after_step(comm);
}

void Trainer::after_step(const StepComm& comm) {
  const double loss = comm.extras[kExtraLoss] / (static_cast<double>(cfg_.batch_size) * data_.output_dim());
  const double flops = model_.flops_per_sample() * samples_;
  metrics_.sample("train/loss", loss, "");
  metrics_.sample("train/step_time", step_ms_, "ms");
  metrics_.sample("train/compute_time", compute_ms_, "ms");
  metrics_.sample("train/comm_time", comm.exposed_ms, "ms");
  metrics_.event("step", {{"step", step_}, {"step_ms", step_ms_}, {"compute_ms", compute_ms_},
                          {"comm_ms", comm.exposed_ms}, {"comm_total_ms", comm.comm_total_ms},
                          {"samples", static_cast<std::int64_t>(samples_)}, {"loss", loss}, {"flops", flops},
                          {"world", static_cast<std::int64_t>(membership_.members.size())},
                          {"generation", static_cast<std::int64_t>(membership_.generation)},
                          {"attempt", static_cast<std::int64_t>(cfg_.attempt)}});
  if (cfg_.target_loss && !target_reported_ && loss <= *cfg_.target_loss) {
    target_reported_ = true;
    metrics_.event("target_reached", {{"step", step_}, {"loss", loss}});
  }
  metrics_.flush();  // step events drive at_step faults: they go out now
  if (cfg_.rank == membership_.leader() && (step_ % 50 == 0 || step_ == cfg_.steps))
    log(fmt::format("step {} loss {:.4f} step {:.1f} ms (compute {:.1f}, exposed comm {:.1f} of {:.1f})", step_, loss,
                    step_ms_, compute_ms_, comm.exposed_ms, comm.comm_total_ms));
  pending_joiners_ = comm.extras[kExtraJoiners] > 0.5f;
}

// The leader writes checkpoints; in elastic mode the leader can change, and the new one
// takes over the same directory.
void Trainer::maybe_checkpoint() {
  report_saves();
  if (cfg_.checkpoint_every <= 0 || step_ % cfg_.checkpoint_every != 0 || !leader()) return;
  if (!writer_) {
    CheckpointConfig c;
    c.dir = cfg_.checkpoint_dir;
    c.incremental = cfg_.checkpoint_incremental;
    c.full_every = cfg_.checkpoint_full_every;
    c.async = cfg_.checkpoint_async;
    writer_ = std::make_unique<CheckpointWriter>(c);
  }
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

void Trainer::report_saves() {
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

// Elastic: the survivors of a failure agree on a new generation and go on from the
// source's state. Returns false when this rank should give up.
bool Trainer::recover(const std::string& error) {
  for (int tries = 0; tries < kMaxRecoveryTries; ++tries) {
    const auto t0 = Clock::now();
    disconnect();
    Membership next = elastic_->agree_after_failure(membership_, step_, cfg_.timeout);
    if (next.index_of(cfg_.rank) < 0) {  // too slow to be listed: come back as a joiner
      log(fmt::format("not in generation {} ({}): joining again", next.generation, fmt::join(next.members, ",")));
      return rejoin(next.generation);
    }
    try {
      connect(next);
      if (context_) step_ = state_.broadcast(context_, next.index_of(next.source), step_, cfg_.timeout);
      log(fmt::format("recovered from \"{}\" in {:.0f} ms", error, ms_between(t0, Clock::now())));
      start("recovered");
      return true;
    } catch (const std::exception& e) {
      log(fmt::format("recovery into generation {} failed: {}", next.generation, e.what()));
      membership_ = next;
    }
  }
  return false;
}

// A returning (or too slow) rank: waits to be admitted, then takes the source's state.
bool Trainer::rejoin(int after) {
  for (int tries = 0; tries < kMaxRecoveryTries; ++tries) {
    auto admitted = elastic_->wait_for_admission(after, kAdmissionTimeout);
    if (!admitted) {
      log(elastic_->finished() ? "training finished before this rank was admitted" : "was not admitted in time");
      return false;
    }
    try {
      connect(*admitted);
      if (context_) step_ = state_.broadcast(context_, admitted->index_of(admitted->source), step_, cfg_.timeout);
      start("rejoined");
      return true;
    } catch (const std::exception& e) {  // a member died meanwhile: ask again
      log(fmt::format("joining generation {} failed: {}", admitted->generation, e.what()));
      disconnect();
      after = admitted->generation;
    }
  }
  return false;
}

// At a step boundary, with ranks waiting: the leader writes the next generation with
// them, everyone moves to it and the newcomers receive the state.
void Trainer::resize(std::vector<int> joiners) {
  const Membership current = membership_;
  const bool lead = leader();
  std::optional<Membership> next;
  if (lead) next = elastic_->grow(current, joiners, step_);
  else next = elastic_->await_generation(current.generation + 1, cfg_.timeout);
  if (!next) throw CollectiveError("the leader did not publish the next generation");
  // A failure's survivors may have claimed that generation first: then it is not this
  // admission, and this rank recovers from the failure like the others.
  const bool expected = next->source == current.leader() &&
                        std::all_of(current.members.begin(), current.members.end(),
                                    [&](int r) { return next->index_of(r) >= 0; });
  if (!expected)
    throw CollectiveError(fmt::format("generation {} is not the admission of {} ({} from rank {})", next->generation,
                                      fmt::join(joiners, ","), fmt::join(next->members, ","), next->source));
  try {
    disconnect();
    connect(*next);
    if (context_) step_ = state_.broadcast(context_, next->index_of(next->source), step_, cfg_.timeout);
  } catch (...) {
    // A joiner that died while waiting would be admitted again at every step boundary;
    // a live one registers again.
    if (lead) elastic_->forget_joiners(joiners);
    throw;
  }
  start("resized");
}

void Trainer::finish() {
  if (writer_) writer_->wait();
  report_saves();
  if (elastic_ && leader()) elastic_->mark_finished();
  if (context_) {  // nobody leaves while a peer still reads its last bucket
    try {
      gloo::BarrierOptions opts(context_);
      opts.setTag(kControlTag);
      opts.setTimeout(cfg_.timeout);
      gloo::barrier(opts);
    } catch (const std::exception& e) {
      log(fmt::format("final barrier: {}", e.what()));
    }
  }
  metrics_.flush();
}

int Trainer::run() {
  const ScopedSignal ignore_sigpipe(SIGPIPE, SIG_IGN);  // a dead peer is an error, not a killed rank
  g_stop_requested = 0;
  const ScopedSignal stop_on_sigterm(SIGTERM, on_sigterm);
  if (cfg_.attempt == 0 && !cfg_.rejoin) {
    const double tflops = measure_gemm_tflops(*device_);
    metrics_.sample("compute/gemm_tflops", tflops, "TFLOP/s", {{"dtype", std::string("fp32")}});
    log(fmt::format("{}: GEMM peak {:.1f} GFLOP/s; model {} parameters, {} ranks, global batch {}", device_->describe(),
                    tflops * 1e3, model_.param_count(), cfg_.world_size, cfg_.batch_size));
  }
  try {
    if (cfg_.rejoin && elastic_) {
      if (!rejoin(elastic_->newest_generation())) return elastic_->finished() ? kTrainOk : kTrainFailed;
    } else {
      Membership all;
      for (int r = 0; r < cfg_.world_size; ++r) all.members.push_back(r);
      restore_checkpoint();
      connect(all);
      // Every rank read the same directory; should one have seen another checkpoint (a
      // write landing in between), the leader's state wins.
      if (context_) {
        std::vector<double> steps{static_cast<double>(step_), -static_cast<double>(step_)};
        gloo::AllreduceOptions opts(context_);
        opts.setOutput(steps.data(), steps.size());
        opts.setReduceFunction(static_cast<void (*)(void*, const void*, const void*, std::size_t)>(&gloo::max<double>));
        opts.setTag(kControlTag);
        gloo::allreduce(opts);
        if (steps[0] != -steps[1]) step_ = state_.broadcast(context_, 0, step_, cfg_.timeout);
      }
      start(step_ > 0 ? "restored" : "fresh");
    }
  } catch (const std::exception& e) {
    log(fmt::format("{}: {}", where_.empty() ? "start" : where_, e.what()));
    return kTrainFailed;
  }
  while (step_ < cfg_.steps) {
    if (g_stop_requested) {
      log(fmt::format("stopped by SIGTERM after step {}", step_));
      if (writer_) writer_->wait();
      report_saves();
      metrics_.flush();
      return kTrainStopped;
    }
    try {
      step_once();
      maybe_checkpoint();
      if (pending_joiners_) resize(joiners_seen_);
    } catch (const std::exception& e) {
      const std::string error = e.what();
      metrics_.event("failure_detected", {{"step", step_}, {"error", error}});
      metrics_.flush();
      log(fmt::format("step {} failed: {}", step_ + 1, error));
      if (!elastic_) return kTrainFailed;
      // Left out while the others trained to the end: the job is done, and so is this rank.
      if (!recover(error)) return elastic_->finished() ? kTrainOk : kTrainFailed;
    }
  }
  finish();
  return kTrainOk;
}

}  // namespace

int run_trainer(const TrainConfig& cfg, MetricsClient& metrics) {
  if (auto why = train_config_error(cfg)) {
    fmt::print(stderr, "rank {}: {}\n", cfg.rank, *why);
    return kTrainBadConfig;
  }
  try {
    Trainer trainer(cfg, metrics);
    return trainer.run();
  } catch (const std::exception& e) {
    fmt::print(stderr, "rank {}: {}\n", cfg.rank, e.what());
    return kTrainFailed;
  }
}

}  // namespace chaosbench::bench::train
