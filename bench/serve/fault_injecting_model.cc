#include "bench/serve/fault_injecting_model.h"

#include <chrono>

namespace chaosbench::bench::serve {
namespace {

class FaultInjectingModel final : public InferenceModel {
 public:
  FaultInjectingModel(std::unique_ptr<InferenceModel> inner, std::shared_ptr<DeviceFaults> faults)
      : inner_(std::move(inner)), faults_(std::move(faults)) {}

  int input_dim() const override { return inner_->input_dim(); }
  int output_dim() const override { return inner_->output_dim(); }
  int max_batch() const override { return inner_->max_batch(); }
  std::string describe() const override { return inner_->describe() + " with fault injection"; }
  std::optional<std::string> unhealthy() const override { return faults_->sticky_error(); }

  // A batch: its activations are allocated (where gpu.oom surfaces), then the kernels run.
  void infer(const float* x, int batch, float* y) override {
    faults_->allocation();
    if (!faults_->slowed()) return inner_->infer(x, batch, y);
    const auto t0 = std::chrono::steady_clock::now();
    inner_->infer(x, batch, y);
    faults_->device_work(std::chrono::steady_clock::now() - t0);
  }

 private:
  std::unique_ptr<InferenceModel> inner_;
  std::shared_ptr<DeviceFaults> faults_;
};

}  // namespace

std::unique_ptr<InferenceModel> with_faults(std::unique_ptr<InferenceModel> inner,
                                            std::shared_ptr<DeviceFaults> faults) {
  if (!faults || !faults->active()) return inner;
  return std::make_unique<FaultInjectingModel>(std::move(inner), std::move(faults));
}

}  // namespace chaosbench::bench::serve
