// HybridRank's step (hybrid_rank.h): the replica's batch, the stage's passes in schedule
// order with the pipeline's messages, the DP reduction and update, the step's loss and
// stop flag summed over the world, and the report.
//
// The bubble: of the step's pipeline phase (its wall time less the data, the DP wait and
// the optimizer), the share the stage did not compute: waiting for a neighbour's
// activations or gradients, for its own sends to be taken, or for the slowest stage at
// the step's end. With equal stages and nothing else in the way that is
// (p − 1)/(m + p − 1) (pipeline_schedule.h).
#include <utility>

#include <fmt/format.h>

#include "bench/train/hybrid_rank.h"
#include "bench/train/train_rank.h"

namespace chaosbench::bench::train {

// The first stage needs only the inputs; the last the targets (and with them the inputs
// the teacher labels).
void HybridRank::make_batch(std::uint64_t first, int count, std::vector<float>& x, std::vector<float>& y) const {
  if (model_.last_stage()) data_.batch(first, count, x.data(), y.data());
  else data_.inputs(first, count, x.data());
}

// This step's replica batch onto the device (only the first stage reads the inputs and
// only the last the targets), and the next step's started on the prefetch thread.
void HybridRank::load_batch() {
  if (!model_.first_stage() && !model_.last_stage()) return;
  const int count = micro_size_ * microbatches_;
  const auto first_of = [&](std::int64_t step) {
    return static_cast<std::uint64_t>(step) * static_cast<std::uint64_t>(cfg_.batch_size) +
           static_cast<std::uint64_t>(me_.dp_rank) * static_cast<std::uint64_t>(count);
  };
  prefetcher_.wait();  // rethrows what the prefetch threw
  if (prefetched_ == step_) {
    std::swap(hx_, next_hx_);
    std::swap(hy_, next_hy_);
  } else {
    make_batch(first_of(step_), count, hx_, hy_);
  }
  prefetched_ = -1;
  if (step_ + 1 < cfg_.steps) {
    const std::uint64_t next = first_of(step_ + 1);
    prefetcher_.start([this, next, count] { make_batch(next, count, next_hx_, next_hy_); });
    prefetched_ = step_ + 1;
  }
  if (model_.first_stage()) device_->from_host(x_, hx_.data(), hx_.size());
  if (model_.last_stage()) device_->from_host(y_, hy_.data(), hy_.size());
}

void HybridRank::step_once(bool stop) {
  const auto t0 = Clock::now();
  const double cpu0 = process_cpu_ms();
  StepTimes t;
  load_batch();
  t.data_ms = ms_between(t0, Clock::now());
  if (reducer_) reducer_->begin_step(std::vector<float>(1, 0.0f));
  run_pipeline(t);
  reduce_and_update(t);
  // The loss (from one rank per replica: TP rank 0 of the last stage) and the stop flag,
  // over the world: every rank reports the global loss and all stop at the same boundary.
  std::vector<double> sums{model_.last_stage() && me_.tp_rank == 0 ? t.loss : 0.0, stop ? 1.0 : 0.0};
  comm_->world_sum(sums);
  t.loss = sums[0] / (static_cast<double>(cfg_.batch_size) * data_.output_dim());
  stop_agreed_ = sums[1] > 0;
  ++step_;
  t.step_ms = ms_between(t0, Clock::now());
  t.cpu_ms = process_cpu_ms() - cpu0;
  t.traffic = comm_->take_traffic();
  report(t);
}

void HybridRank::run_pipeline(StepTimes& t) {
  const auto in_w = static_cast<std::size_t>(model_.input_width());
  const auto out_w = static_cast<std::size_t>(model_.output_width());
  const auto rows = static_cast<std::size_t>(micro_size_);
  const int prev = model_.first_stage() ? -1 : layout_.rank({me_.tp_rank, me_.pp_stage - 1, me_.dp_rank});
  const int next = model_.last_stage() ? -1 : layout_.rank({me_.tp_rank, me_.pp_stage + 1, me_.dp_rank});
  // Loss = mean squared error over the global batch, as the data-parallel trainer's.
  const float scale = 1.0f / (static_cast<float>(cfg_.batch_size) * static_cast<float>(data_.output_dim()));
  const TpAllreduce tp = [this](float* data, std::size_t n) { comm_->tp_allreduce(data, n); };
  const std::function<void(int)> to_reducer = [this](int layer) { reducer_->layer_done(layer); };
  int backwards = 0;
  for (const PipelineOp& op : ops_) {
    const int mb = op.microbatch, slot = mb % model_.slots();
    const float* x = model_.first_stage() ? x_ + static_cast<std::size_t>(mb) * rows * in_w
                                          : inputs_[static_cast<std::size_t>(mb)];
    float* dy = output_grads_[static_cast<std::size_t>(mb)];
    if (op.forward) {
      if (prev >= 0) comm_->recv(inputs_[static_cast<std::size_t>(mb)], rows * in_w, prev, pipeline_tag(mb, true));
      const auto start = Clock::now();
      const float* out = model_.forward(slot, x, micro_size_, tp);
      if (next < 0)
        t.loss += device_->squared_error(out, y_ + static_cast<std::size_t>(mb) * rows * out_w, rows * out_w, scale, dy);
      t.busy_ms += ms_between(start, Clock::now());
      if (next >= 0) comm_->send(out, rows * out_w, next, pipeline_tag(mb, true));
      continue;
    }
    if (next >= 0) comm_->recv(dy, rows * out_w, next, pipeline_tag(mb, false));
    const bool last_pass = ++backwards == microbatches_;  // the gradients are final: DP reduces them
    const auto start = Clock::now();
    const float* grad_in = model_.backward(slot, x, dy, micro_size_, backwards > 1, tp,
                                           last_pass && reducer_ ? to_reducer : std::function<void(int)>());
    t.busy_ms += ms_between(start, Clock::now());
    if (prev >= 0) comm_->send(grad_in, rows * in_w, prev, pipeline_tag(mb, false));
  }
}

void HybridRank::reduce_and_update(StepTimes& t) {
  if (reducer_) {
    const StepComm c = reducer_->finish();
    t.dp_ms = c.exposed_ms;
    t.dp_total_ms = c.comm_total_ms;
    t.dp_bytes = model_.param_count() * sizeof(float);
  }
  const auto start = Clock::now();
  optimizer_.step(model_.params(), model_.grads(), 1.0f);
  device_->synchronize();
  t.optimizer_ms = ms_between(start, Clock::now());
}

// train/comm_time and the step's comm_ms / comm_total_ms are the DP gradient allreduce's
// exposed and whole time, as for the data-parallel trainer (train/overlap keeps its
// meaning); the pipeline's waits are the bubble, the TP allreduces part of stage_time.
void HybridRank::report(const StepTimes& t) {
  const Labels at = coords_labels();
  const auto& d = layout_.dims();
  const double pipeline_ms = std::max(t.step_ms - t.data_ms - t.dp_ms - t.optimizer_ms, 1e-9);
  const double bubble = std::clamp(100.0 * (1.0 - t.busy_ms / pipeline_ms), 0.0, 100.0);
  const double compute_ms = t.busy_ms + t.optimizer_ms;
  // One rank per replica counts its samples, so that their sum is the global batch.
  const bool counts = model_.last_stage() && me_.tp_rank == 0;
  const int samples = counts ? micro_size_ * microbatches_ : 0;
  const double flops = model_.flops_per_sample() * micro_size_ * microbatches_;
  for (const auto& [name, value, unit] : std::initializer_list<std::tuple<const char*, double, const char*>>{
           {"train/loss", t.loss, ""}, {"train/step_time", t.step_ms, "ms"}, {"train/compute_time", compute_ms, "ms"},
           {"train/comm_time", t.dp_ms, "ms"}, {"train/data_time", t.data_ms, "ms"},
           {"train/optimizer_time", t.optimizer_ms, "ms"}, {"train/cpu_time", t.cpu_ms, "ms"},
           {"train/pipeline_bubble", bubble, "%"}, {"train/stage_time", t.busy_ms, "ms"}})
    metrics_.sample(name, value, unit, at);
  const struct { const char* group; double ms; std::uint64_t bytes; } groups[] = {
      {"tp", t.traffic.tp_ms, t.traffic.tp_bytes}, {"pp", t.traffic.pp_ms, t.traffic.pp_bytes},
      {"dp", t.dp_ms, t.dp_bytes}};
  for (const auto& g : groups) {
    Labels labels = at;
    labels.emplace("group", std::string(g.group));
    metrics_.sample("comm/time", g.ms, "ms", labels);
    metrics_.sample("comm/bytes", static_cast<double>(g.bytes), "bytes", labels);
  }
  // The TP allreduce's latency per message size (the collective benchmark's comm/latency,
  // for the same size), the mean over the step's calls.
  for (const auto& [bytes, calls] : t.traffic.tp_calls) {
    Labels labels = at;
    labels.insert({{"collective", std::string("allreduce")}, {"algorithm", std::string("direct")},
                   {"group", std::string("tp")}, {"bytes", static_cast<std::int64_t>(bytes)},
                   {"ranks", static_cast<std::int64_t>(d.tp)}});
    metrics_.sample("comm/latency", 1e3 * calls.ms / calls.count, "us", labels);
  }
  Labels fields{{"step", step_}, {"step_ms", t.step_ms}, {"compute_ms", compute_ms},
                {"comm_ms", t.dp_ms}, {"comm_total_ms", t.dp_total_ms},
                {"samples", static_cast<std::int64_t>(samples)}, {"loss", t.loss}, {"flops", flops},
                {"world", static_cast<std::int64_t>(d.world())}, {"generation", std::int64_t{0}},
                {"attempt", static_cast<std::int64_t>(cfg_.attempt)}, {"tp", static_cast<std::int64_t>(d.tp)},
                {"pp", static_cast<std::int64_t>(d.pp)}, {"dp", static_cast<std::int64_t>(d.dp)},
                {"bubble_pct", bubble}, {"stage_ms", t.busy_ms}, {"tp_comm_ms", t.traffic.tp_ms},
                {"pp_comm_ms", t.traffic.pp_ms}, {"dp_comm_ms", t.dp_ms},
                {"tp_bytes", static_cast<std::int64_t>(t.traffic.tp_bytes)},
                {"pp_bytes", static_cast<std::int64_t>(t.traffic.pp_bytes)},
                {"dp_bytes", static_cast<std::int64_t>(t.dp_bytes)}};
  fields.merge(Labels(at));
  metrics_.event("step", std::move(fields));
  if (cfg_.target_loss && !target_reported_ && t.loss <= *cfg_.target_loss) {
    target_reported_ = true;
    metrics_.event("target_reached", {{"step", step_}, {"loss", t.loss}});
  }
  metrics_.flush();  // step events drive at_step faults: they go out now
  if (cfg_.rank == 0 && (step_ % 50 == 0 || step_ == cfg_.steps))
    log(fmt::format("step {} loss {:.6f} step {:.1f} ms (stage {:.1f}, bubble {:.1f} %, tp {:.1f}, dp {:.1f})", step_,
                    t.loss, t.step_ms, t.busy_ms, bubble, t.traffic.tp_ms, t.dp_ms));
}

}  // namespace chaosbench::bench::train
