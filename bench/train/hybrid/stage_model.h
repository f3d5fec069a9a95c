// One pipeline stage of the trainer's MLP, as one tensor-parallel rank holds it: the
// stage's layers cut as its StagePlan says (stage_plan.h: Megatron column/row pairs), on a
// Device, with the activations of several microbatches held at once (`slots`: the most a
// pipeline schedule keeps in flight, pipeline_schedule.h). The numbers are the unsplit
// MlpModel's: the same initial weights (a shard is cut from initial_weight()), the same
// forward, and gradients that sum to the unsplit ones, up to the order of the sums.
//
// Layout as MlpModel's: this rank's parameters and gradients each in ONE flat buffer,
// layer after layer (weight [out x in] of the local shapes, then bias), so the DP gradient
// reducer buckets it like the data-parallel model. Local shapes: a column layer holds
// rows [t·out/tp, (t+1)·out/tp) of the weight and bias; a row layer columns
// [t·in/tp, (t+1)·in/tp) of the weight and the whole bias (every TP rank applies it to
// the summed output and gets the same gradient for it).
//
// The TP group's allreduces go through `TpAllreduce` (sum in place over the group): one
// per pair in forward (the row layer's partial outputs, before its bias) and one in
// backward (the column layer's input gradient; not for the model's first layer, whose
// input gradient nobody needs).
// Threads: one thread drives a stage model; the callbacks run on it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <vector>

#include "bench/compute/device.h"
#include "bench/compute/mlp_model.h"
#include "bench/train/hybrid/stage_plan.h"

namespace chaosbench::bench::train {

using TpAllreduce = std::function<void(float* data, std::size_t n)>;

class StageModel {
 public:
  // widths: the whole model's (input first); plan: this stage's; max_batch: a microbatch's
  // samples. Throws std::invalid_argument for a bad shape or a width tp does not divide.
  StageModel(Device& device, const std::vector<int>& widths, StagePlan plan, int tp, int tp_rank, int max_batch,
             int slots, std::size_t grad_tail = 0);
  ~StageModel();
  StageModel(const StageModel&) = delete;
  StageModel& operator=(const StageModel&) = delete;

  int layers() const { return static_cast<int>(shapes_.size()); }
  bool first_stage() const { return plan_.first == 0; }
  bool last_stage() const { return plan_.last + 1 == static_cast<int>(widths_.size()); }
  int input_width() const { return widths_[static_cast<std::size_t>(plan_.first)]; }
  int output_width() const { return widths_[static_cast<std::size_t>(plan_.last)]; }
  int slots() const { return slots_; }
  std::size_t param_count() const { return param_count_; }
  const std::vector<LayerSpan>& spans() const { return spans_; }
  float* params() { return params_; }
  float* grads() { return grads_; }
  std::size_t grad_tail() const { return grad_tail_; }

  // This rank's shard of MlpModel::init(seed)'s parameters.
  void init(std::uint64_t seed, float output_scale = 0.1f);

  // x: [batch x input_width]. Returns the stage output [batch x output_width], valid until
  // the slot's next forward.
  const float* forward(int slot, const float* x, int batch, const TpAllreduce& tp);
  // Backward of the slot's last forward (same x), from dy = dL/d(stage output) [batch x
  // output_width] (overwritten: the ReLU's mask is applied in place).
  // accumulate: add to the gradients (a later microbatch) instead of overwriting them.
  // on_layer_done(l), local layer l from layers()-1 down, once its gradients are final for
  // this call (after device.synchronize()). Returns dL/d(stage input) [batch x
  // input_width], valid until the slot's next backward; nullptr on the first stage.
  const float* backward(int slot, const float* x, float* dy, int batch, bool accumulate, const TpAllreduce& tp,
                        const std::function<void(int layer)>& on_layer_done);

  // GEMM FLOPs of this shard's forward+backward per sample (as MlpModel's).
  double flops_per_sample() const;

 private:
  struct Shape {
    int in = 0, out = 0;   // local GEMM shape
    LayerSplit split = LayerSplit::kReplicated;
    bool relu = true;      // every layer but the model's last
  };
  float* weight(int l) { return params_ + spans_[static_cast<std::size_t>(l)].offset; }
  float* bias(int l) { return weight(l) + static_cast<std::size_t>(shapes_[l].out) * shapes_[l].in; }
  float* act(int slot, int l) { return acts_[static_cast<std::size_t>(slot * layers() + l)]; }
  float* alloc(std::size_t n);
  void release_buffers();

  Device& device_;
  std::vector<int> widths_;
  StagePlan plan_;
  int tp_, tp_rank_, max_batch_, slots_;
  std::vector<Shape> shapes_;
  std::vector<LayerSpan> spans_;
  std::size_t param_count_ = 0, grad_tail_ = 0;
  float* params_ = nullptr;
  float* grads_ = nullptr;
  float* ones_ = nullptr;  // [max_batch] of 1: bias gradients as a GEMM, so they can accumulate
  std::vector<float*> buffers_;  // everything allocated, for release
  std::vector<float*> acts_;     // [slot][layer] outputs, [max_batch x out]
  std::vector<float*> input_grads_;  // per slot
  std::vector<float*> deltas_;   // per layer but the first: dL/d(its input), [max_batch x in]
};

}  // namespace chaosbench::bench::train
