// The stage's forward and backward: MlpModel's GEMMs on the local shapes, with the TP
// group's two allreduces per column/row pair where Megatron's f and g operators put them.
#include "bench/train/hybrid/stage_model.h"

#include <algorithm>
#include <stdexcept>
#include <string>
#include <utility>

namespace chaosbench::bench::train {

StageModel::StageModel(Device& device, const std::vector<int>& widths, StagePlan plan, int tp, int tp_rank,
                       int max_batch, int slots, std::size_t grad_tail)
    : device_(device), widths_(widths), plan_(std::move(plan)), tp_(tp), tp_rank_(tp_rank), max_batch_(max_batch),
      slots_(slots), grad_tail_(grad_tail) {
  const int model_layers = static_cast<int>(widths_.size()) - 1;
  if (plan_.first < 0 || plan_.last > model_layers || plan_.first >= plan_.last ||
      plan_.splits.size() != static_cast<std::size_t>(plan_.last - plan_.first))
    throw std::invalid_argument("StageModel: the stage plan does not fit the model");
  if (tp_ < 1 || tp_rank_ < 0 || tp_rank_ >= tp_ || max_batch_ < 1 || slots_ < 1)
    throw std::invalid_argument("StageModel: tp, tp_rank, max_batch or slots out of range");
  // Every row layer right after a column layer, and every column layer before a row one:
  // the stage's input and output are then whole on every TP rank.
  for (std::size_t i = 0; i < plan_.splits.size(); ++i) {
    const bool column = plan_.splits[i] == LayerSplit::kColumn, row = plan_.splits[i] == LayerSplit::kRow;
    if ((column && (i + 1 == plan_.splits.size() || plan_.splits[i + 1] != LayerSplit::kRow)) ||
        (row && (i == 0 || plan_.splits[i - 1] != LayerSplit::kColumn)))
      throw std::invalid_argument("StageModel: the plan splits a layer without its column/row partner");
  }
  for (int l = plan_.first; l < plan_.last; ++l) {
    Shape s{widths_[static_cast<std::size_t>(l)], widths_[static_cast<std::size_t>(l) + 1],
            plan_.splits[static_cast<std::size_t>(l - plan_.first)], l + 1 < model_layers};
    const int split_width = s.split == LayerSplit::kColumn ? s.out : s.split == LayerSplit::kRow ? s.in : tp_;
    if (split_width % tp_ != 0)
      throw std::invalid_argument("StageModel: " + tp_split_error(split_width, tp_));
    if (s.split == LayerSplit::kColumn) s.out /= tp_;
    if (s.split == LayerSplit::kRow) s.in /= tp_;
    spans_.push_back({param_count_, static_cast<std::size_t>(s.out) * s.in + static_cast<std::size_t>(s.out)});
    param_count_ += spans_.back().count;
    shapes_.push_back(s);
  }
  try {
    params_ = alloc(param_count_);
    grads_ = alloc(param_count_ + grad_tail_);
    ones_ = alloc(static_cast<std::size_t>(max_batch_));
    device_.fill(ones_, 1.0f, static_cast<std::size_t>(max_batch_));
    const auto batch = static_cast<std::size_t>(max_batch_);
    for (int slot = 0; slot < slots_; ++slot) {
      for (const Shape& s : shapes_) acts_.push_back(alloc(batch * static_cast<std::size_t>(s.out)));
      input_grads_.push_back(alloc(batch * static_cast<std::size_t>(input_width())));
    }
    for (int l = 1; l < layers(); ++l) deltas_.push_back(alloc(batch * static_cast<std::size_t>(shapes_[l].in)));
  } catch (...) {
    release_buffers();  // a throwing constructor runs no destructor
    throw;
  }
}

StageModel::~StageModel() { release_buffers(); }

float* StageModel::alloc(std::size_t n) {
  buffers_.reserve(buffers_.size() + 1);  // so that push_back cannot throw and lose the buffer
  float* p = device_.allocate(n);
  buffers_.push_back(p);
  return p;
}

void StageModel::release_buffers() {
  for (float* p : buffers_) device_.release(p);
  buffers_.clear();
}

void StageModel::init(std::uint64_t seed, float output_scale) {
  std::vector<float> host(param_count_, 0.0f);
  const int model_layers = static_cast<int>(widths_.size()) - 1;
  for (int i = 0; i < layers(); ++i) {
    const int l = plan_.first + i;
    const int in = widths_[static_cast<std::size_t>(l)];
    const auto full = initial_weight(seed, l, in, widths_[static_cast<std::size_t>(l) + 1], l + 1 == model_layers,
                                     output_scale);
    const Shape& s = shapes_[static_cast<std::size_t>(i)];
    float* w = host.data() + spans_[static_cast<std::size_t>(i)].offset;
    // The rows (column layer) or the columns (row layer) of this TP rank; biases stay 0.
    const std::size_t row0 = s.split == LayerSplit::kColumn ? static_cast<std::size_t>(tp_rank_) * s.out : 0;
    const std::size_t col0 = s.split == LayerSplit::kRow ? static_cast<std::size_t>(tp_rank_) * s.in : 0;
    for (int r = 0; r < s.out; ++r) {
      const float* src = full.data() + (row0 + static_cast<std::size_t>(r)) * static_cast<std::size_t>(in) + col0;
      std::copy_n(src, s.in, w + static_cast<std::size_t>(r) * s.in);
    }
  }
  device_.from_host(params_, host.data(), param_count_);
}

const float* StageModel::forward(int slot, const float* x, int batch, const TpAllreduce& tp) {
  if (batch < 1 || batch > max_batch_ || slot < 0 || slot >= slots_)
    throw std::invalid_argument("StageModel::forward: batch " + std::to_string(batch) + " or slot out of range");
  const float* input = x;
  for (int l = 0; l < layers(); ++l) {
    const Shape& s = shapes_[static_cast<std::size_t>(l)];
    float* y = act(slot, l);
    device_.gemm(false, true, batch, s.out, s.in, 1.0f, input, s.in, weight(l), s.in, 0.0f, y, s.out);
    if (s.split == LayerSplit::kRow) {  // g: the partial outputs summed, then the bias once
      device_.synchronize();
      tp(y, static_cast<std::size_t>(batch) * static_cast<std::size_t>(s.out));
    }
    device_.bias_activation(y, bias(l), batch, s.out, s.relu);
    input = y;
  }
  return act(slot, layers() - 1);
}

const float* StageModel::backward(int slot, const float* x, float* dy, int batch, bool accumulate, const TpAllreduce& tp,
                                  const std::function<void(int layer)>& on_layer_done) {
  if (batch < 1 || batch > max_batch_ || slot < 0 || slot >= slots_)
    throw std::invalid_argument("StageModel::backward: batch " + std::to_string(batch) + " or slot out of range");
  const float beta = accumulate ? 1.0f : 0.0f;
  const Shape& top = shapes_.back();
  // The stage's output went through its last layer's ReLU: the gradient stops where it was 0.
  if (top.relu) device_.relu_backward(dy, act(slot, layers() - 1), static_cast<std::size_t>(batch) * top.out);
  for (int l = layers() - 1; l >= 0; --l) {
    const Shape& s = shapes_[static_cast<std::size_t>(l)];
    const float* input = l == 0 ? x : act(slot, l - 1);
    float* dw = grads_ + spans_[static_cast<std::size_t>(l)].offset;
    float* db = dw + static_cast<std::size_t>(s.out) * s.in;
    device_.gemm(true, false, s.out, s.in, batch, 1.0f, dy, s.out, input, s.in, beta, dw, s.in);
    device_.gemm(false, false, 1, s.out, batch, 1.0f, ones_, batch, dy, s.out, beta, db, s.out);
    device_.synchronize();
    if (on_layer_done) on_layer_done(l);
    if (l == 0 && first_stage()) break;  // the model's input needs no gradient
    float* dx = l == 0 ? input_grads_[static_cast<std::size_t>(slot)] : deltas_[static_cast<std::size_t>(l) - 1];
    device_.gemm(false, false, batch, s.in, s.out, 1.0f, dy, s.out, weight(l), s.in, 0.0f, dx, s.in);
    if (s.split == LayerSplit::kColumn) {  // f's backward: each rank's part of dL/dx summed
      device_.synchronize();
      tp(dx, static_cast<std::size_t>(batch) * static_cast<std::size_t>(s.in));
    }
    // Through layer l-1's ReLU; the stage's own input is masked by the previous stage.
    if (l > 0) device_.relu_backward(dx, act(slot, l - 1), static_cast<std::size_t>(batch) * s.in);
    dy = dx;
  }
  device_.synchronize();
  return first_stage() ? nullptr : input_grads_[static_cast<std::size_t>(slot)];
}

double StageModel::flops_per_sample() const {
  double flops = 0.0;
  for (int l = 0; l < layers(); ++l) {
    const double matrix = 2.0 * shapes_[static_cast<std::size_t>(l)].in * shapes_[static_cast<std::size_t>(l)].out;
    flops += l == 0 && first_stage() ? 2.0 * matrix : 3.0 * matrix;
  }
  return flops;
}

}  // namespace chaosbench::bench::train
