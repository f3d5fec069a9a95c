// The MLP's forward and backward passes as GEMMs on the device. Activations are row-major
// [batch x width], so layer l computes Y = X W^T + b with W stored [out x in]; backward
// computes each layer's weight and bias gradients before its input gradient, so the
// callback (which starts that layer's allreduce on another thread) comes as early as the
// data dependencies allow.
#include "bench/compute/mlp_model.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <utility>
#include <string>

#include "bench/compute/counter_rng.h"

namespace chaosbench::bench::train {
namespace {

// Stream ids of the layers' weights ("mlp" and the layer), apart from the data set's.
constexpr std::uint64_t kWeightStreams = 0x6d6c700000000000ULL;

}  // namespace

MlpModel::MlpModel(Device& device, std::vector<int> layer_sizes, int max_batch, std::size_t grad_tail)
    : device_(device), sizes_(std::move(layer_sizes)), max_batch_(max_batch), grad_tail_(grad_tail) {
  if (sizes_.size() < 2) throw std::invalid_argument("MlpModel: needs at least an input and an output width");
  for (const int width : sizes_) {
    if (width < 1) throw std::invalid_argument("MlpModel: layer width " + std::to_string(width) + " < 1");
  }
  if (max_batch_ < 1) throw std::invalid_argument("MlpModel: max_batch " + std::to_string(max_batch_) + " < 1");
  for (int l = 0; l < layers(); ++l) {
    const auto in = static_cast<std::size_t>(sizes_[l]);
    const auto out = static_cast<std::size_t>(sizes_[l + 1]);
    spans_.push_back({param_count_, out * in + out});
    param_count_ += out * in + out;
  }
  activations_.reserve(sizes_.size());  // so that no push_back throws and loses a buffer
  deltas_.reserve(sizes_.size());
  try {
    params_ = device_.allocate(param_count_);
    grads_ = device_.allocate(param_count_ + grad_tail_);
    const auto batch = static_cast<std::size_t>(max_batch_);
    for (int l = 0; l < layers(); ++l) {
      activations_.push_back(device_.allocate(batch * static_cast<std::size_t>(sizes_[l + 1])));
    }
    // dL/d(output) of every layer but the last, whose gradient the caller passes in.
    for (int l = 0; l + 1 < layers(); ++l) {
      deltas_.push_back(device_.allocate(batch * static_cast<std::size_t>(sizes_[l + 1])));
    }
  } catch (...) {
    release_buffers();  // a throwing constructor runs no destructor
    throw;
  }
}

MlpModel::~MlpModel() { release_buffers(); }

void MlpModel::release_buffers() {
  for (float* p : deltas_) device_.release(p);
  for (float* p : activations_) device_.release(p);
  if (grads_ != nullptr) device_.release(grads_);
  if (params_ != nullptr) device_.release(params_);
  deltas_.clear();
  activations_.clear();
  grads_ = params_ = nullptr;
}

std::vector<float> initial_weight(std::uint64_t seed, int layer, int in, int out, bool last, float output_scale) {
  std::vector<float> w(static_cast<std::size_t>(out) * static_cast<std::size_t>(in));
  float stddev = std::sqrt(2.0f / static_cast<float>(in));  // He et al. 2015, for ReLU inputs
  if (last) stddev *= output_scale;
  fill_normal(stream_key(seed, kWeightStreams + static_cast<std::uint64_t>(layer)), 0, w.data(), w.size(), stddev);
  return w;
}

void MlpModel::init(std::uint64_t seed, float output_scale) {
  std::vector<float> host(param_count_, 0.0f);
  for (int l = 0; l < layers(); ++l) {
    const auto w = initial_weight(seed, l, sizes_[l], sizes_[l + 1], l + 1 == layers(), output_scale);
    std::copy(w.begin(), w.end(), host.begin() + static_cast<std::ptrdiff_t>(spans_[l].offset));
    // The bias after the weight stays zero.
  }
  device_.from_host(params_, host.data(), param_count_);
}

const float* MlpModel::forward(const float* x, int batch) {
  if (batch < 1 || batch > max_batch_) {
    throw std::invalid_argument("MlpModel::forward: batch " + std::to_string(batch) + " outside 1.." +
                                std::to_string(max_batch_));
  }
  const float* input = x;
  for (int l = 0; l < layers(); ++l) {
    const int in = sizes_[l];
    const int out = sizes_[l + 1];
    const float* weight = params_ + spans_[l].offset;
    const float* bias = weight + static_cast<std::size_t>(out) * in;
    float* y = activations_[l];
    // Y[batch x out] = X[batch x in] * W^T, W stored [out x in].
    device_.gemm(false, true, batch, out, in, 1.0f, input, in, weight, in, 0.0f, y, out);
    device_.bias_activation(y, bias, batch, out, l + 1 < layers());
    input = y;
  }
  return activations_.back();
}

void MlpModel::backward(const float* x, const float* dout, int batch,
                        const std::function<void(int layer)>& on_layer_done) {
  if (batch < 1 || batch > max_batch_) {
    throw std::invalid_argument("MlpModel::backward: batch " + std::to_string(batch) + " outside 1.." +
                                std::to_string(max_batch_));
  }
  const float* dy = dout;  // dL/dY of layer l, [batch x out]
  for (int l = layers() - 1; l >= 0; --l) {
    const int in = sizes_[l];
    const int out = sizes_[l + 1];
    const float* input = l == 0 ? x : activations_[l - 1];
    const float* weight = params_ + spans_[l].offset;
    float* dweight = grads_ + spans_[l].offset;
    float* dbias = dweight + static_cast<std::size_t>(out) * in;
    // dW[out x in] = dY^T[out x batch] * X[batch x in]; beta 0 overwrites the old gradient.
    device_.gemm(true, false, out, in, batch, 1.0f, dy, out, input, in, 0.0f, dweight, in);
    device_.column_sums(dy, batch, out, dbias);
    // Layer l's gradients are final from here on: nothing below writes them again.
    device_.synchronize();
    if (on_layer_done) on_layer_done(l);
    if (l == 0) break;  // the input's gradient is not needed
    // dX[batch x in] = dY[batch x out] * W[out x in], then through layer l-1's ReLU.
    float* dx = deltas_[l - 1];
    device_.gemm(false, false, batch, in, out, 1.0f, dy, out, weight, in, 0.0f, dx, in);
    device_.relu_backward(dx, activations_[l - 1], static_cast<std::size_t>(batch) * in);
    dy = dx;
  }
}

double MlpModel::flops_per_sample() const {
  double flops = 0.0;
  for (int l = 0; l < layers(); ++l) {
    const double matrix = 2.0 * sizes_[l] * sizes_[l + 1];
    flops += l == 0 ? 2.0 * matrix : 3.0 * matrix;  // no input gradient for the first layer
  }
  return flops;
}

}  // namespace chaosbench::bench::train
