// A multi-layer perceptron on a Device: dense layers with ReLU between them and a linear
// output. Parameters and gradients each live in ONE flat device buffer, layer after layer
// (layer l: weight [out x in] row-major, then bias [out]), so gradient buckets are
// contiguous ranges and an optimizer is one loop over the whole model.
// Threads: one thread drives a model; backward's callback runs on that thread.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <vector>

#include "bench/compute/device.h"

namespace chaosbench::bench::train {

struct LayerSpan {
  std::size_t offset = 0;  // first element of this layer's weight in the flat buffers
  std::size_t count = 0;   // weight and bias elements together
};

// Layer `layer`'s initial weight [out x in] row-major, as MlpModel::init makes it: He
// normal (std sqrt(2/in)), times output_scale for the model's last layer; one random
// stream per layer, so a layer's weights do not depend on the other layers' shapes (and a
// tensor-parallel shard is cut from the same numbers, stage_model.h).
std::vector<float> initial_weight(std::uint64_t seed, int layer, int in, int out, bool last, float output_scale);

class MlpModel {
 public:
  // layer_sizes: input width first, output width last (at least two entries, each >= 1).
  // max_batch: the largest batch forward/backward will see (activations are sized for it).
  // grad_tail: floats of room after the gradients (grads() holds param_count() +
  // grad_tail), where a gradient reducer puts what rides with the last layer's bucket.
  // Throws std::invalid_argument for a bad shape.
  MlpModel(Device& device, std::vector<int> layer_sizes, int max_batch, std::size_t grad_tail = 0);
  ~MlpModel();
  MlpModel(const MlpModel&) = delete;
  MlpModel& operator=(const MlpModel&) = delete;

  const std::vector<int>& layer_sizes() const { return sizes_; }
  int layers() const { return static_cast<int>(sizes_.size()) - 1; }
  std::size_t param_count() const { return param_count_; }
  const std::vector<LayerSpan>& spans() const { return spans_; }

  float* params() { return params_; }  // device buffer, param_count() floats
  float* grads() { return grads_; }    // device buffer, same layout, then grad_tail() more
  std::size_t grad_tail() const { return grad_tail_; }

  // Deterministic initialisation from `seed`: He-normal weights (std sqrt(2/in)), zero
  // biases; the last layer is scaled by `output_scale` so an untrained model's outputs
  // are small. Same seed, same bits.
  void init(std::uint64_t seed, float output_scale = 0.1f);

  // x: device buffer [batch x input]; returns the device buffer [batch x output] that
  // stays valid until the next forward.
  const float* forward(const float* x, int batch);
  // dout: dL/d(output) for the last forward's batch. Overwrites grads() (no accumulation),
  // last layer first; after layer l's weight and bias gradients are final it calls
  // on_layer_done(l) (l from layers()-1 down to 0), after device.synchronize(). The first
  // layer's input gradient is not computed.
  void backward(const float* x, const float* dout, int batch, const std::function<void(int layer)>& on_layer_done);

  // GEMM floating-point operations of one forward+backward pass per sample:
  // sum over layers of 2*in*out (forward) + 2*in*out (weight gradient) + 2*in*out (input
  // gradient, all layers but the first). This is the "model FLOPs" of train/mfu.
  double flops_per_sample() const;

 private:
  Device& device_;
  std::vector<int> sizes_;
  int max_batch_;
  std::vector<LayerSpan> spans_;
  std::size_t param_count_ = 0;
  std::size_t grad_tail_ = 0;
  float* params_ = nullptr;
  float* grads_ = nullptr;
  std::vector<float*> activations_;  // per layer output, [max_batch x out]
  std::vector<float*> deltas_;       // dL/d(output) of each layer but the last (the caller's dout)

  void release_buffers();
};

}  // namespace chaosbench::bench::train
