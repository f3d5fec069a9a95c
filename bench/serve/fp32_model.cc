// load_weights and the fp32 InferenceModel: the trainer's MlpModel on the CPU device, so
// the server computes exactly what the trainer's forward pass computes.
#include <cblas.h>

#include <fmt/format.h>

#include <algorithm>
#include <stdexcept>

#include "bench/serve/inference_model.h"
#include "bench/checkpoint/checkpoint_loader.h"
#include "bench/compute/cpu_device.h"
#include "bench/compute/mlp_model.h"

namespace chaosbench::bench::serve {
namespace {

std::size_t param_count(const std::vector<int>& layers) {
  std::size_t n = 0;
  for (std::size_t l = 0; l + 1 < layers.size(); ++l)
    n += static_cast<std::size_t>(layers[l + 1]) * static_cast<std::size_t>(layers[l]) +
         static_cast<std::size_t>(layers[l + 1]);
  return n;
}

// The CPU device sets OpenBLAS's process-wide thread count; keep whatever the worker chose.
std::unique_ptr<train::Device> cpu_device() { return train::make_cpu_device(std::max(1, openblas_get_num_threads())); }

class Fp32Model final : public InferenceModel {
 public:
  Fp32Model(const ModelWeights& weights, int max_batch)
      : device_(cpu_device()), model_(*device_, weights.layers, max_batch), max_batch_(max_batch) {
    if (weights.params.size() != model_.param_count())
      throw std::invalid_argument(fmt::format("make_fp32_model: {} parameters given, the model has {}",
                                              weights.params.size(), model_.param_count()));
    device_->from_host(model_.params(), weights.params.data(), weights.params.size());
    x_ = device_->allocate(static_cast<std::size_t>(max_batch) * static_cast<std::size_t>(input_dim()));
  }
  ~Fp32Model() override { device_->release(x_); }

  int input_dim() const override { return model_.layer_sizes().front(); }
  int output_dim() const override { return model_.layer_sizes().back(); }
  int max_batch() const override { return max_batch_; }

  void infer(const float* x, int batch, float* y) override {
    const auto in = static_cast<std::size_t>(batch) * static_cast<std::size_t>(input_dim());
    device_->from_host(x_, x, in);
    const float* out = model_.forward(x_, batch);
    device_->to_host(y, out, static_cast<std::size_t>(batch) * static_cast<std::size_t>(output_dim()));
  }

  std::string describe() const override {
    return fmt::format("mlp {} fp32", fmt::join(model_.layer_sizes(), "-"));
  }

 private:
  std::unique_ptr<train::Device> device_;
  train::MlpModel model_;
  int max_batch_;
  float* x_ = nullptr;
};

}  // namespace

ModelWeights load_weights(const std::vector<int>& layers, const std::optional<std::string>& checkpoint_dir,
                          std::uint64_t seed) {
  ModelWeights w;
  w.layers = layers;
  if (checkpoint_dir && !checkpoint_dir->empty()) {
    // The trainer's model key also names its optimizer, which a server does not know.
    std::vector<train::RejectedCheckpoint> rejected;
    for (const char* optimizer : {"sgd", "adamw"}) {
      const auto key = fmt::format("mlp {} {}", fmt::join(layers, "-"), optimizer);
      auto loaded = train::load_latest_checkpoint(*checkpoint_dir, key, &rejected, param_count(layers));
      if (!loaded) continue;
      for (auto& [name, buffer] : loaded->state.buffers) {
        if (name != "params") continue;
        if (buffer.size() != param_count(layers))
          throw std::runtime_error(fmt::format("checkpoint {}: {} parameters, layers {} need {}", loaded->file,
                                               buffer.size(), fmt::join(layers, ","), param_count(layers)));
        w.params = std::move(buffer);
        return w;
      }
      throw std::runtime_error(fmt::format("checkpoint {} holds no \"params\" buffer", loaded->file));
    }
    // A checkpoint of another model is an error, not a reason to serve random weights.
    for (const auto& r : rejected)
      if (r.reason.find("model key differs") != std::string::npos)
        throw std::runtime_error(fmt::format("checkpoint {} in {} does not fit layers {}: {}", r.file,
                                             *checkpoint_dir, fmt::join(layers, ","), r.reason));
  }
  auto device = cpu_device();
  train::MlpModel model(*device, layers, 1);
  model.init(seed);
  w.params.resize(model.param_count());
  device->to_host(w.params.data(), model.params(), w.params.size());
  return w;
}

std::unique_ptr<InferenceModel> make_fp32_model(const ModelWeights& weights, int max_batch) {
  return std::make_unique<Fp32Model>(weights, max_batch);
}

}  // namespace chaosbench::bench::serve
