// The model the inference server runs: the trainer's MLP (bench/compute/mlp_model.h layout)
// behind one interface, in fp32 or with int8 weights. The server, its batcher and the
// benchmarks see only this.
// Threads: infer() is called by one thread at a time per object (the batcher's).
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace chaosbench::bench::serve {

// Weights in MlpModel's flat layout: per layer, weight [out x in] row-major, then bias [out].
struct ModelWeights {
  std::vector<int> layers;    // widths, input first
  std::vector<float> params;  // sum over layers of out*in + out
};

class InferenceModel {
 public:
  virtual ~InferenceModel() = default;
  virtual int input_dim() const = 0;
  virtual int output_dim() const = 0;
  virtual int max_batch() const = 0;
  // y [batch x output_dim] = model(x [batch x input_dim]); batch <= max_batch().
  virtual void infer(const float* x, int batch, float* y) = 0;
  virtual std::string describe() const = 0;  // "mlp 256-1024-16 fp32", "... int8 (per-channel)"
  // Why the model cannot serve any more (its device was lost: a sticky GPU error), or
  // nullopt while it can. The server's readiness says so.
  virtual std::optional<std::string> unhealthy() const { return std::nullopt; }
};

// The newest good checkpoint's "params" from `checkpoint_dir` (the trainer's), or, without
// one, a model initialised from `seed` exactly as the trainer initialises it. Throws
// std::runtime_error when a checkpoint exists but does not fit `layers`.
ModelWeights load_weights(const std::vector<int>& layers, const std::optional<std::string>& checkpoint_dir,
                          std::uint64_t seed);

std::unique_ptr<InferenceModel> make_fp32_model(const ModelWeights& weights, int max_batch);
// Weights quantised to int8 with one scale per output channel (symmetric), activations
// quantised per row at run time; int32 accumulation; biases and outputs in fp32.
std::unique_ptr<InferenceModel> make_int8_model(const ModelWeights& weights, int max_batch);

}  // namespace chaosbench::bench::serve
