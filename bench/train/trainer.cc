#include "bench/train/trainer.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <ctime>
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
#include "bench/common/device_error.h"
#include "bench/common/thread_priority.h"
#include "bench/train/checkpoint_loader.h"
#include "bench/train/checkpoint_writer.h"
#include "bench/train/device_factory.h"
#include "bench/train/fault_injecting_device.h"
#include "bench/train/gemm_peak.h"
#include "bench/train/grad_allreducer.h"
#include "bench/train/tcp_ring_reducer.h"
#include "bench/train/membership.h"
#include "bench/train/replica_check.h"
#include "bench/train/step_watchdog.h"
#include "bench/train/synthetic_data.h"
#include "bench/train/train_state.h"

namespace chaosbench::bench::train {
namespace {

using Clock = std::chrono::steady_clock;
constexpr std::uint32_t kControlTag = 600;
// Extras riding with the first gradient bucket: the shard's squared-error sum, the
// number of ranks waiting to join (only the leader's is non-zero), then one replica
// fingerprint slot per member (replica_check.h).
constexpr std::size_t kExtraLoss = 0, kExtraJoiners = 1, kExtraFingerprints = 2;
// Consecutive failed recoveries before an elastic rank gives up.
constexpr int kMaxRecoveryTries = 5;
// How long a returning rank waits to be admitted.
constexpr auto kAdmissionTimeout = std::chrono::minutes(10);

// failure_detected {reason: device, code, xid[, step]}: what the harness recovers from
// and gpu/xid_events counts.
void report_device_error(MetricsClient& metrics, const DeviceError& e, std::optional<std::int64_t> step) {
  Labels fields{{"error", std::string(e.what())}, {"reason", std::string("device")},
                {"code", static_cast<std::int64_t>(e.code())}, {"xid", static_cast<std::int64_t>(e.xid())}};
  if (step) fields.emplace("step", *step);
  metrics.event("failure_detected", std::move(fields));
  metrics.flush();
}

bool device_lost(const std::exception& e) {
  const auto* d = dynamic_cast<const DeviceError*>(&e);
  return d && d->source() == DeviceError::Source::kDevice;
}

// Replicas disagree and no majority says which state is good: not recoverable in memory.
class UnrecoverableCorruption : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// SIGTERM (the harness stopping every rank for a restart, as torchrun does) ends the
// rank at the next step boundary, after the checkpoint being written is on disk; a rank
// stuck in a collective gets SIGKILL from the harness after its grace period.
std::atomic<int> g_stop_requested{0};
static_assert(std::atomic<int>::is_always_lock_free, "the SIGTERM handler stores to it");

extern "C" void on_sigterm(int) { g_stop_requested = 1; }

double ms_between(Clock::time_point a, Clock::time_point b) {
  return std::chrono::duration<double, std::milli>(b - a).count();
}

// CPU time of the whole process, every thread (compute, communication, gloo's own), in ms.
double process_cpu_ms() {
  timespec ts{};
  ::clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) * 1e3 + static_cast<double>(ts.tv_nsec) * 1e-6;
}

std::string model_key(const TrainConfig& cfg) {
  return fmt::format("mlp {} {}", fmt::join(cfg.layers, "-"), cfg.optimizer.kind);
}

class Trainer {
 public:
  Trainer(const TrainConfig& cfg, MetricsClient& metrics)
      : cfg_(cfg), metrics_(metrics), faults_(open_faults(cfg.rank)),
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
  static std::shared_ptr<DeviceFaults> open_faults(int rank);
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
  if (cfg_.backend == "nccl")  // gloo above stays the control plane, as PyTorch's gloo group beside NCCL
    allreducer_ = with_faults(make_nccl_reducer(*device_, store_->store(), "nccl", m.index_of(cfg_.rank),
                                                static_cast<int>(m.members.size()), model_.grads(), model_.spans(),
                                                cfg_.bucket_bytes, cfg_.timeout, extras_count()),
                              faults_);
  else if (cfg_.algorithm == AllreduceAlgorithm::kTcpRing)
    allreducer_ = std::make_unique<TcpRingReducer>(store_->store(), "ring", m.index_of(cfg_.rank),
                                                   static_cast<int>(m.members.size()), cfg_.host, model_.grads(),
                                                   model_.spans(), cfg_.bucket_bytes, cfg_.timeout, extras_count(),
                                                   model_.grad_tail(), faults_);
  else
    allreducer_ = std::make_unique<GradientAllreducer>(context_, model_.grads(), model_.spans(), cfg_.bucket_bytes,
                                                       cfg_.timeout, extras_count(), cfg_.algorithm, faults_,
                                                       model_.grad_tail());
  fingerprint_.reset();  // a new group: the first step after it sends no fingerprint
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

// One optimizer step: false when it was not taken (the replicas disagreed and were
// repaired: the step is computed again). Starts the watchdog's watch; the caller ends it
// after the step boundary's work.
bool Trainer::step_once() {
  const auto t0 = Clock::now();
  const double cpu0 = process_cpu_ms();
  watchdog_.begin_step(step_ + 1);
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
  // Activations: the batch through every layer, as a caching allocator reserves them.
  std::size_t activations = 0;
  for (int width : cfg_.layers) activations += static_cast<std::size_t>(count) * static_cast<std::size_t>(width);
  device_->reserve_workspace(activations);
  device_->from_host(x_, hx_.data(), in);
  device_->from_host(y_, hy_.data(), out);
  const auto data_end = Clock::now();
  const float* pred = model_.forward(x_, count);
  // Loss = mean squared error over the global batch; each shard's gradient carries its
  // share, so the allreduced sum is the exact global gradient.
  const float scale = 1.0f / (static_cast<float>(cfg_.batch_size) * static_cast<float>(data_.output_dim()));
  const double sq = device_->squared_error(pred, y_, out, scale, dout_);
  const auto forward_end = Clock::now();
  std::vector<float> extras(extras_count(), 0.0f);
  extras[kExtraLoss] = static_cast<float>(sq);
  if (fingerprint_ && allreducer_) put_fingerprint(extras, kExtraFingerprints, idx, *fingerprint_);
  joiners_seen_.clear();
  if (elastic_ && leader()) {
    joiners_seen_ = elastic_->pending_joiners(membership_);
    extras[kExtraJoiners] = static_cast<float>(joiners_seen_.size());
  }
  if (allreducer_) allreducer_->begin_step(extras);
  model_.backward(x_, dout_, count, [&](int layer) {
    local_gradients_done(layer);
    if (allreducer_) allreducer_->layer_done(layer);
  });
  const auto backward_end = Clock::now();
  compute_ms_ = ms_between(t0, backward_end);
  parts_.data_ms = ms_between(t0, data_end);
  parts_.forward_ms = ms_between(data_end, forward_end);
  parts_.backward_ms = ms_between(forward_end, backward_end);
  // gpu.bitflip in the summed gradients needs them whole: the update then waits for all.
  const auto grad_shot = faults_ ? faults_->bitflip(CB_TENSOR_GRADIENTS) : std::nullopt;
  Reduced reduced;
  if (allreducer_) {
    reduced = reduce_and_update(!grad_shot);
    if (!check_replicas(reduced.comm)) return false;
  } else {
    reduced.comm.extras = extras;
  }
  const StepComm& comm = reduced.comm;
  const double updates_ms = reduced.updates_ms;
  const auto opt_start = Clock::now();
  if (!reduced.updated) {
    apply_bitflip(grad_shot, CB_TENSOR_GRADIENTS, model_.grads(), 0, model_.param_count(), step_ + 1);
    optimizer_.step(model_.params(), model_.grads(), 1.0f);
  }
  device_->synchronize();
  ++step_;
  // The weights between steps: after this step's update, before its fingerprint, so the
  // replicas compare the flipped weights at the next step, before they are used.
  inject_bitflip(CB_TENSOR_PARAMETERS, model_.params(), 0, model_.param_count(), step_);
  fingerprint_.reset();
  if (allreducer_ && sdc_check_due())
    fingerprint_ = replica_fingerprint(*device_, model_.params(), model_.grads(), model_.param_count(), scratch_);
  const auto t1 = Clock::now();
  compute_ms_ += ms_between(opt_start, t1) + updates_ms;
  parts_.optimizer_ms = ms_between(opt_start, t1) + updates_ms;
  parts_.cpu_ms = process_cpu_ms() - cpu0;
  step_ms_ = ms_between(t0, t1);
  samples_ = count;
  after_step(comm);
  return true;
}

// The step's allreduce, with the optimizer overlapping it where the reducer hands buckets
// over one by one (tcp_ring): each bucket is updated as soon as its sums are in, while
// later ones are still on the wire, once bucket 0's extras show the replicas agree (when
// they do not, nothing is updated: the caller repairs). Without `overlap` (a bit flip in
// the summed gradients needs them whole) the caller updates after it, as it does for a
// reducer that cannot hand buckets over.
Trainer::Reduced Trainer::reduce_and_update(bool overlap) {
  Reduced out;
  if (overlap) {
    const int n = static_cast<int>(membership_.members.size());
    bool agreed = false;
    const bool streamed = allreducer_->finish_each(
        [&](const std::vector<float>& extras) {
          const auto v = compare_fingerprints(extras, kExtraFingerprints, n);
          agreed = !v.complete || v.agree;
          if (agreed) optimizer_.begin_step();
          return agreed;
        },
        [&](std::size_t offset, std::size_t count) {
          const auto start = Clock::now();
          optimizer_.update(model_.params(), model_.grads(), 1.0f, offset, count);
          out.updates_ms += ms_between(start, Clock::now());
        },
        out.comm);
    out.updated = streamed && agreed;  // disagreeing replicas were not updated: the caller repairs
    if (streamed) return out;
  }
  out.comm = allreducer_->finish();
  return out;
}

// Backward finished `layer`: its gradients are this rank's own until the allreduce takes
// them, which is when a flip there is summed into every replica.
void Trainer::local_gradients_done(int layer) {
  const auto& span = model_.spans()[static_cast<std::size_t>(layer)];
  if (layer == static_cast<int>(model_.spans().size()) - 1)
    inject_bitflip(CB_TENSOR_LOCAL_GRADIENTS, model_.grads(), span.offset, span.count, step_ + 1);
}

// gpu.bitflip, when armed for `tensor`: flips bits of buffer[offset, offset + n) in
// device memory and says where (the emulation's own report; a real flip is silent).
// `step`: the step whose state it corrupts (its gradients, or the weights it produced).
void Trainer::apply_bitflip(const std::optional<BitflipShot>& shot, cb_bitflip_tensor tensor, float* buffer,
                            std::size_t offset, std::size_t n, std::int64_t step) {
  if (!shot) return;
  scratch_.resize(n);
  device_->to_host(scratch_.data(), buffer + offset, n);
  const auto flips = flip_bits(scratch_.data(), n, *shot);
  device_->from_host(buffer + offset, scratch_.data(), n);
  static constexpr const char* kTensor[] = {"gradients", "parameters", "local_gradients"};
  for (const auto& f : flips) {
    metrics_.event("fault_injected", {{"kind", std::string("gpu.bitflip")}, {"tensor", std::string(kTensor[tensor])},
                                      {"step", step}, {"index", static_cast<std::int64_t>(offset + f.index)},
                                      {"bit", static_cast<std::int64_t>(f.bit)}});
    log(fmt::format("gpu.bitflip: flipped bit {} of {}[{}] of step {}", f.bit, kTensor[tensor], offset + f.index,
                    step));
  }
}

// The replicas' fingerprints of the state after the previous step, read from this step's
// extras. True when they agree (or there is nothing to compare); after a repair, false.
bool Trainer::check_replicas(const StepComm& comm) {
  const int n = static_cast<int>(membership_.members.size());
  const auto v = compare_fingerprints(comm.extras, kExtraFingerprints, n);
  if (!v.complete || v.agree) return true;
  std::vector<int> bad, good;
  for (int m : v.minority) bad.push_back(membership_.members[static_cast<std::size_t>(m)]);
  for (int m : v.majority) good.push_back(membership_.members[static_cast<std::size_t>(m)]);
  const std::string error =
      fmt::format("replicas disagree after step {}: rank(s) {} differ from rank(s) {} (silent data corruption)", step_,
                  fmt::join(bad, ","), fmt::join(good, ","));
  metrics_.event("failure_detected", {{"step", step_}, {"error", error}, {"reason", std::string("sdc")}});
  metrics_.event("sdc_detected", {{"step", step_ + 1}, {"state_step", step_}, {"ranks", fmt::format("{}", fmt::join(bad, ","))},
                                  {"action", std::string(v.strict_majority ? "repaired" : "unrecoverable")}});
  metrics_.flush();
  log(error);
  if (!v.strict_majority) throw UnrecoverableCorruption(error + "; no majority names the good state");
  const int source = v.majority.front();
  step_ = state_.broadcast(context_, source, step_, cfg_.timeout);
  fingerprint_.reset();
  log(fmt::format("state of step {} taken from rank {}; computing step {} again", step_,
                  membership_.members[static_cast<std::size_t>(source)], step_ + 1));
  start("repaired");
  return false;
}

// A failed device call: the context is lost (or memory is short), and only a new process
// recovers, which the harness starts (restart), or which joins (elastic).
int Trainer::device_failed(const DeviceError& e) {
  report_device_error(metrics_, e, step_);
  log(fmt::format("device error: {}", e.what()));
  return kTrainDeviceError;
}

std::shared_ptr<DeviceFaults> Trainer::open_faults(int rank) {
  std::string why;
  auto faults = DeviceFaults::from_env(&why);
  if (!why.empty()) fmt::print(stderr, "rank {}: GPU faults disabled: {}\n", rank, why);
  return faults;
}

void Trainer::after_step(const StepComm& comm) {
  const double loss = comm.extras[kExtraLoss] / (static_cast<double>(cfg_.batch_size) * data_.output_dim());
  const double flops = model_.flops_per_sample() * samples_;
  metrics_.sample("train/loss", loss, "");
  metrics_.sample("train/step_time", step_ms_, "ms");
  metrics_.sample("train/compute_time", compute_ms_, "ms");
  metrics_.sample("train/comm_time", comm.exposed_ms, "ms");
  metrics_.sample("train/data_time", parts_.data_ms, "ms");
  metrics_.sample("train/forward_time", parts_.forward_ms, "ms");
  metrics_.sample("train/backward_time", parts_.backward_ms, "ms");
  metrics_.sample("train/optimizer_time", parts_.optimizer_ms, "ms");
  metrics_.sample("train/cpu_time", parts_.cpu_ms, "ms");
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
      if (device_lost(e)) throw;  // no new generation helps a rank whose device is gone
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
      if (device_lost(e)) throw;
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

// Ending the rank early (stopped, or failed): the checkpoint being written is finished
// first, from the host copy the writer holds, so a restart resumes from it.
int Trainer::leave(int code) {
  if (writer_) writer_->wait();
  report_saves();
  metrics_.flush();
  return code;
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
  try {
    if (cfg_.attempt == 0 && !cfg_.rejoin) {
      const double tflops = measure_gemm_tflops(*device_);
      metrics_.sample("compute/gemm_tflops", tflops, "TFLOP/s", {{"dtype", std::string("fp32")}});
      const double hardware = device_->peak_tflops();
      if (hardware > 0) metrics_.sample("compute/peak_tflops", hardware, "TFLOP/s", {{"dtype", std::string("fp32")}});
      log(fmt::format("{}: GEMM peak {:.1f} GFLOP/s of the hardware's {:.1f}; model {} parameters, {} ranks, global "
                      "batch {}",
                      device_->describe(), tflops * 1e3, hardware * 1e3, model_.param_count(), cfg_.world_size,
                      cfg_.batch_size));
    }
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
  } catch (const DeviceError& e) {  // a GPU that failed before (or as) this process started
    if (e.source() == DeviceError::Source::kDevice) return device_failed(e);
    log(fmt::format("{}: {}", where_.empty() ? "start" : where_, e.what()));
    return kTrainFailed;
  } catch (const std::exception& e) {
    log(fmt::format("{}: {}", where_.empty() ? "start" : where_, e.what()));
    return kTrainFailed;
  }
  while (step_ < cfg_.steps) {
    if (g_stop_requested) {
      log(fmt::format("stopped by SIGTERM after step {}", step_));
      return leave(kTrainStopped);
    }
    try {
      // The watchdog covers the step and what follows it at the boundary (the checkpoint
      // snapshot, an admission), which touch the device and the peers too.
      if (step_once()) {
        maybe_checkpoint();
        if (pending_joiners_) resize(joiners_seen_);
      }
      watchdog_.end_step();
    } catch (const UnrecoverableCorruption& e) {
      watchdog_.end_step();
      log(e.what());
      return leave(kTrainFailed);
    } catch (const DeviceError& e) {
      watchdog_.end_step();
      if (e.source() == DeviceError::Source::kDevice) return leave(device_failed(e));
      if (!collective_failed(e.what(), "collective", e.code()))
        return leave(elastic_ && elastic_->finished() ? kTrainOk : kTrainFailed);
    } catch (const CollectiveError& e) {
      watchdog_.end_step();
      if (!collective_failed(e.what(), "collective", 0))
        return leave(elastic_ && elastic_->finished() ? kTrainOk : kTrainFailed);
    } catch (const std::exception& e) {  // not a peer's failure, but the others see it as one
      watchdog_.end_step();
      if (!collective_failed(e.what(), "error", 0))
        return leave(elastic_ && elastic_->finished() ? kTrainOk : kTrainFailed);
    }
  }
  finish();
  return kTrainOk;
}

// A collective failed (a peer died or hung, or the library returned an error): reported;
// then true when this rank goes on (elastic recovery succeeded).
bool Trainer::collective_failed(const std::string& error, const char* reason, int code) {
  {
    Labels fields{{"step", step_}, {"error", error}, {"reason", std::string(reason)}};
    if (code != 0) fields.emplace("code", static_cast<std::int64_t>(code));
    metrics_.event("failure_detected", std::move(fields));
  }
  metrics_.flush();
  log(fmt::format("step {} failed: {}", step_ + 1, error));
  if (!elastic_) return false;
  // Left out while the others trained to the end, recover() fails: the caller then ends
  // this rank with success when the job is done.
  return recover(error);
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
  } catch (const DeviceError& e) {
    // A device lost while the trainer was being set up (a process started on a GPU that
    // is still broken) or while recovering: reported as any device error.
    if (e.source() != DeviceError::Source::kDevice) {
      fmt::print(stderr, "rank {}: {}\n", cfg.rank, e.what());
      return kTrainFailed;
    }
    report_device_error(metrics, e, std::nullopt);
    fmt::print(stderr, "rank {}: device error: {}\n", cfg.rank, e.what());
    return kTrainDeviceError;
  } catch (const std::exception& e) {
    fmt::print(stderr, "rank {}: {}\n", cfg.rank, e.what());
    return kTrainFailed;
  }
}

}  // namespace chaosbench::bench::train
