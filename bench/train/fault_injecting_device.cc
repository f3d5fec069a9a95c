#include "bench/train/fault_injecting_device.h"

#include <chrono>

namespace chaosbench::bench::train {
namespace {

using Clock = std::chrono::steady_clock;

class FaultInjectingDevice final : public Device {
 public:
  FaultInjectingDevice(std::unique_ptr<Device> inner, std::shared_ptr<DeviceFaults> faults)
      : inner_(std::move(inner)), faults_(std::move(faults)) {}

  std::string describe() const override { return inner_->describe() + " with fault injection"; }
  double peak_tflops() const override { return inner_->peak_tflops(); }

  float* allocate(std::size_t n) override {
    faults_->allocation();
    return inner_->allocate(n);
  }
  // Freeing never fails, even on a lost context (cudaFree's error is ignored by callers).
  void release(float* p) override { inner_->release(p); }
  void reserve_workspace(std::size_t floats) override {
    faults_->allocation();
    inner_->reserve_workspace(floats);
  }
  const float* host_view(const float* dev) const override { return inner_->host_view(dev); }
  void to_host(float* host, const float* dev, std::size_t n) override {
    timed([&] { inner_->to_host(host, dev, n); });
  }
  void from_host(float* dev, const float* host, std::size_t n) override {
    timed([&] { inner_->from_host(dev, host, n); });
  }
  void fill(float* dev, float value, std::size_t n) override {
    timed([&] { inner_->fill(dev, value, n); });
  }
  void gemm(bool trans_a, bool trans_b, int m, int n, int k, float alpha, const float* a, int lda, const float* b,
            int ldb, float beta, float* c, int ldc) override {
    timed([&] { inner_->gemm(trans_a, trans_b, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc); });
  }
  void bias_activation(float* y, const float* bias, int rows, int cols, bool relu) override {
    timed([&] { inner_->bias_activation(y, bias, rows, cols, relu); });
  }
  void relu_backward(float* dy, const float* y, std::size_t n) override {
    timed([&] { inner_->relu_backward(dy, y, n); });
  }
  void column_sums(const float* dy, int rows, int cols, float* out) override {
    timed([&] { inner_->column_sums(dy, rows, cols, out); });
  }
  double squared_error(const float* pred, const float* target, std::size_t n, float scale, float* grad) override {
    double r = 0;
    timed([&] { r = inner_->squared_error(pred, target, n, scale, grad); });
    return r;
  }
  void sgd_momentum(float* p, const float* grad, float* m, std::size_t n, float lr, float momentum,
                    float weight_decay, float grad_scale) override {
    timed([&] { inner_->sgd_momentum(p, grad, m, n, lr, momentum, weight_decay, grad_scale); });
  }
  void adamw(float* p, const float* grad, float* m, float* v, std::size_t n, float lr, float beta1, float beta2,
             float eps, float weight_decay, std::int64_t step, float grad_scale) override {
    timed([&] { inner_->adamw(p, grad, m, v, n, lr, beta1, beta2, eps, weight_decay, step, grad_scale); });
  }
  void synchronize() override {
    timed([&] { inner_->synchronize(); });
  }

 private:
  // A device call: a sticky error or a hang first; its duration stretched by a slowdown.
  // On a GPU the time is the host's view of an asynchronous launch, so a slowdown there
  // is read at synchronize(); the CPU device computes synchronously and this is exact.
  template <class F>
  void timed(F&& call) {
    faults_->device_call();
    if (!faults_->slowed()) return call();  // no clock reads on the common path
    const auto t0 = Clock::now();
    call();
    faults_->device_work(Clock::now() - t0);
  }

  std::unique_ptr<Device> inner_;
  std::shared_ptr<DeviceFaults> faults_;
};

class FaultInjectingReducer final : public GradientReducer {
 public:
  FaultInjectingReducer(std::unique_ptr<GradientReducer> inner, std::shared_ptr<DeviceFaults> faults)
      : inner_(std::move(inner)), faults_(std::move(faults)) {}
  void begin_step(const std::vector<float>& extras) override {
    checked_ = false;
    inner_->begin_step(extras);
  }
  // Before the step's first bucket is queued: the collective fails (or hangs) where the
  // library would, and the peers wait for this rank's part.
  void layer_done(int layer) override {
    check();
    inner_->layer_done(layer);
  }
  StepComm finish() override {
    check();
    return inner_->finish();
  }

 private:
  void check() {
    if (checked_) return;
    checked_ = true;
    faults_->collective();
  }

  std::unique_ptr<GradientReducer> inner_;
  std::shared_ptr<DeviceFaults> faults_;
  bool checked_ = false;  // this step's collectives were checked
};

}  // namespace

std::unique_ptr<GradientReducer> with_faults(std::unique_ptr<GradientReducer> inner,
                                             std::shared_ptr<DeviceFaults> faults) {
  if (!faults || !faults->active()) return inner;
  return std::make_unique<FaultInjectingReducer>(std::move(inner), std::move(faults));
}

std::unique_ptr<Device> with_faults(std::unique_ptr<Device> inner, std::shared_ptr<DeviceFaults> faults) {
  if (!faults || !faults->active()) return inner;
  return std::make_unique<FaultInjectingDevice>(std::move(inner), std::move(faults));
}

}  // namespace chaosbench::bench::train
