#include "bench/train/trainer.h"
#include "bench/train/train_rank.h"

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

#include "bench/rendezvous/rendezvous.h"
#include "bench/common/scoped_signal.h"
#include "bench/common/device_error.h"
#include "bench/common/thread_priority.h"
#include "bench/checkpoint/checkpoint_loader.h"
#include "bench/checkpoint/checkpoint_writer.h"
#include "bench/train/device_factory.h"
#include "bench/train/fault_injecting_device.h"
#include "bench/compute/gemm_peak.h"
#include "bench/train/comm/grad_allreducer.h"
#include "bench/train/hybrid_rank.h"
#include "bench/train/comm/tcp_ring_reducer.h"
#include "bench/train/membership/membership.h"
#include "bench/train/replica_check.h"
#include "bench/train/step_watchdog.h"
#include "bench/compute/synthetic_data.h"
#include "bench/train/train_state.h"

namespace chaosbench::bench::train {
namespace {

constexpr std::uint32_t kControlTag = 600;

// SIGTERM (the harness stopping every rank for a restart, as torchrun does) ends the
// rank at the next step boundary, after the checkpoint being written is on disk; a rank
// stuck in a collective gets SIGKILL from the harness after its grace period.
std::atomic<int> g_stop_requested{0};
static_assert(std::atomic<int>::is_always_lock_free, "the SIGTERM handler stores to it");

extern "C" void on_sigterm(int) { g_stop_requested = 1; }

}  // namespace

double process_cpu_ms() {
  timespec ts{};
  ::clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) * 1e3 + static_cast<double>(ts.tv_nsec) * 1e-6;
}

void report_device_error(MetricsClient& metrics, const DeviceError& e, std::optional<std::int64_t> step) {
  Labels fields{{"error", std::string(e.what())}, {"reason", std::string("device")},
                {"code", static_cast<std::int64_t>(e.code())}, {"xid", static_cast<std::int64_t>(e.xid())}};
  if (step) fields.emplace("step", *step);
  metrics.event("failure_detected", std::move(fields));
  metrics.flush();
}

void TrainRank::connect(const Membership& m) {
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

void TrainRank::disconnect() {
  allreducer_.reset();  // joins the comm thread first: it holds the context
  context_.reset();     // closes every connection, so the peers notice now
  store_.reset();
}

void TrainRank::start(const char* reason) {
  metrics_.event("train_start", {{"step", step_}, {"world", static_cast<std::int64_t>(membership_.members.size())},
                                 {"generation", static_cast<std::int64_t>(membership_.generation)},
                                 {"attempt", static_cast<std::int64_t>(cfg_.attempt)}, {"reason", std::string(reason)}});
  metrics_.flush();
  log(fmt::format("training from step {} ({}; generation {}, {} ranks: {})", step_, reason, membership_.generation,
                  membership_.members.size(), fmt::join(membership_.members, ",")));
}


// One optimizer step: false when it was not taken (the replicas disagreed and were
// repaired: the step is computed again). Starts the watchdog's watch; the caller ends it
// after the step boundary's work.
bool TrainRank::step_once() {
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
TrainRank::Reduced TrainRank::reduce_and_update(bool overlap) {
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
void TrainRank::local_gradients_done(int layer) {
  const auto& span = model_.spans()[static_cast<std::size_t>(layer)];
  if (layer == static_cast<int>(model_.spans().size()) - 1)
    inject_bitflip(CB_TENSOR_LOCAL_GRADIENTS, model_.grads(), span.offset, span.count, step_ + 1);
}

// gpu.bitflip, when armed for `tensor`: flips bits of buffer[offset, offset + n) in
// device memory and says where (the emulation's own report; a real flip is silent).
// `step`: the step whose state it corrupts (its gradients, or the weights it produced).
void TrainRank::apply_bitflip(const std::optional<BitflipShot>& shot, cb_bitflip_tensor tensor, float* buffer,
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



std::shared_ptr<DeviceFaults> open_device_faults(int rank) {
  std::string why;
  auto faults = DeviceFaults::from_env(&why);
  if (!why.empty()) fmt::print(stderr, "rank {}: GPU faults disabled: {}\n", rank, why);
  return faults;
}

void TrainRank::after_step(const StepComm& comm) {
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






// Ending the rank early (stopped, or failed): the checkpoint being written is finished
// first, from the host copy the writer holds, so a restart resumes from it.
int TrainRank::leave(int code) {
  if (writer_) writer_->wait();
  report_saves();
  metrics_.flush();
  return code;
}

void TrainRank::finish() {
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

int TrainRank::run() {
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


int run_trainer(const TrainConfig& cfg, MetricsClient& metrics) {
  if (auto why = train_config_error(cfg)) {
    fmt::print(stderr, "rank {}: {}\n", cfg.rank, *why);
    return kTrainBadConfig;
  }
  const ScopedSignal ignore_sigpipe(SIGPIPE, SIG_IGN);  // a dead peer is an error, not a killed rank
  g_stop_requested = 0;
  const ScopedSignal stop_on_sigterm(SIGTERM, on_sigterm);
  try {
    if (cfg.parallel.hybrid()) {
      HybridRank rank(cfg, metrics);
      return rank.run(g_stop_requested);
    }
    TrainRank trainer(cfg, metrics);
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
