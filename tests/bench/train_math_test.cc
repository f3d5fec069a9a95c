// The trainer's numeric core on the CPU device: the MLP's gradients against finite
// differences, the backward callback's order and timing, deterministic initialisation and
// data, the optimizers against scalar versions of device.h's rules, and short training
// runs that must learn. No root, no network; a few seconds in all.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <memory>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "bench/compute/cpu_device.h"
#include "bench/compute/gemm_peak.h"
#include "bench/compute/mlp_model.h"
#include "bench/compute/optimizer.h"
#include "bench/compute/synthetic_data.h"

namespace train_math_test {  // this file's names, apart in a unity batch (tests/CMakeLists.txt)

using namespace chaosbench::bench::train;

namespace {

// A device buffer filled from and read back to host vectors, released at scope exit.
class Buffer {
 public:
  Buffer(Device& device, std::size_t n) : device_(device), n_(n), data_(device.allocate(n)) {}
  Buffer(Device& device, const std::vector<float>& host) : Buffer(device, host.size()) { set(host); }
  ~Buffer() { device_.release(data_); }
  Buffer(const Buffer&) = delete;
  Buffer& operator=(const Buffer&) = delete;
  float* get() { return data_; }
  void set(const std::vector<float>& host) { device_.from_host(data_, host.data(), n_); }

 private:
  Device& device_;
  std::size_t n_;
  float* data_;
};

std::vector<float> read(Device& device, const float* dev, std::size_t n) {
  std::vector<float> host(n);
  device.to_host(host.data(), dev, n);
  return host;
}

// Sum of squared errors of the model on (x, y); fills dout = 2 (pred - y) when asked.
double sse(Device& device, MlpModel& model, float* x, float* y, int batch, float* dout = nullptr) {
  const std::size_t n = static_cast<std::size_t>(batch) * static_cast<std::size_t>(model.layer_sizes().back());
  Buffer grad(device, n);
  return device.squared_error(model.forward(x, batch), y, n, 1.0f, dout != nullptr ? dout : grad.get());
}

bool same_bits(const std::vector<float>& a, const std::vector<float>& b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0;
}

}  // namespace

TEST_CASE("train: mlp gradients match central finite differences", "[train]") {
  auto device = make_cpu_device(1);
  const int batch = 4;
  MlpModel model(*device, {5, 7, 6, 3}, batch);
  model.init(11, 1.0f);  // full-size outputs, so every layer's gradient is sizeable
  // Non-zero biases: with zero ones a sample whose previous layer is all dead sits exactly
  // on the next ReLU's kink, where central differences see half a slope.
  std::vector<float> params = read(*device, model.params(), model.param_count());
  for (int l = 0; l < model.layers(); ++l) {
    const LayerSpan span = model.spans()[l];
    const int out = model.layer_sizes()[l + 1];
    for (std::size_t i = span.offset + span.count - out; i < span.offset + span.count; ++i) params[i] = 0.05f;
  }
  device->from_host(model.params(), params.data(), params.size());
  SyntheticDataset data(5, 3, 12);
  std::vector<float> hx(batch * 5), hy(batch * 3);
  data.batch(0, batch, hx.data(), hy.data());
  Buffer x(*device, hx), y(*device, hy), dout(*device, hy.size());

  sse(*device, model, x.get(), y.get(), batch, dout.get());
  model.backward(x.get(), dout.get(), batch, nullptr);
  const auto analytic = read(*device, model.grads(), model.param_count());

  const float h = 1e-2f;
  int checked = 0;
  for (std::size_t i = 0; i < params.size(); ++i) {
    const float saved = params[i];
    params[i] = saved + h;
    device->from_host(model.params(), params.data(), params.size());
    const double plus = sse(*device, model, x.get(), y.get(), batch);
    params[i] = saved - h;
    device->from_host(model.params(), params.data(), params.size());
    const double minus = sse(*device, model, x.get(), y.get(), batch);
    params[i] = saved;
    const double numeric = (plus - minus) / (2.0 * h);
    INFO("parameter " << i << ": analytic " << analytic[i] << ", numeric " << numeric);
    CHECK(std::abs(analytic[i] - numeric) <= 2e-2 * std::max(std::abs(numeric), 1e-1));
    ++checked;
  }
  CHECK(checked == static_cast<int>(model.param_count()));
  CHECK(model.param_count() == 5 * 7 + 7 + 7 * 6 + 6 + 6 * 3 + 3);
  CHECK(model.flops_per_sample() == 2.0 * (2 * 5 * 7) + 3.0 * (2 * 7 * 6) + 3.0 * (2 * 6 * 3));
}

TEST_CASE("train: mlp backward reports layers last to first with final gradients", "[train]") {
  auto device = make_cpu_device(1);
  const int batch = 8;
  MlpModel model(*device, {8, 16, 16, 4}, batch);
  model.init(3);
  SyntheticDataset data(8, 4, 4);
  std::vector<float> hx(batch * 8), hy(batch * 4);
  data.batch(0, batch, hx.data(), hy.data());
  Buffer x(*device, hx), y(*device, hy), dout(*device, hy.size());
  sse(*device, model, x.get(), y.get(), batch, dout.get());

  // Stale gradients first: backward overwrites rather than accumulates.
  device->fill(model.grads(), 123.0f, model.param_count());
  std::vector<int> order;
  std::vector<std::vector<float>> at_callback(model.layers());
  model.backward(x.get(), dout.get(), batch, [&](int layer) {
    order.push_back(layer);
    const LayerSpan span = model.spans()[layer];
    at_callback[layer] = read(*device, model.grads() + span.offset, span.count);
  });
  CHECK(order == std::vector<int>{2, 1, 0});
  for (int l = 0; l < model.layers(); ++l) {
    const LayerSpan span = model.spans()[l];
    INFO("layer " << l);
    CHECK(same_bits(at_callback[l], read(*device, model.grads() + span.offset, span.count)));
  }
  const auto grads = read(*device, model.grads(), model.param_count());
  for (const float g : grads) REQUIRE(g != 123.0f);
}

TEST_CASE("train: mlp layout, shapes and deterministic initialisation", "[train]") {
  auto device = make_cpu_device(1);
  REQUIRE_THROWS_AS(MlpModel(*device, {4}, 1), std::invalid_argument);
  REQUIRE_THROWS_AS(MlpModel(*device, {4, 0, 2}, 1), std::invalid_argument);
  REQUIRE_THROWS_AS(MlpModel(*device, {4, 2}, 0), std::invalid_argument);

  MlpModel a(*device, {64, 128, 10}, 2), b(*device, {64, 128, 10}, 2);
  REQUIRE(a.spans().size() == 2);
  CHECK(a.spans()[0].offset == 0);
  CHECK(a.spans()[0].count == 128 * 64 + 128);
  CHECK(a.spans()[1].offset == 128 * 64 + 128);
  CHECK(a.spans()[1].count == 10 * 128 + 10);
  CHECK(a.param_count() == a.spans()[1].offset + a.spans()[1].count);

  a.init(7, 0.1f);
  b.init(7, 0.1f);
  const auto pa = read(*device, a.params(), a.param_count());
  CHECK(same_bits(pa, read(*device, b.params(), b.param_count())));
  b.init(8, 0.1f);
  const auto pb = read(*device, b.params(), b.param_count());
  int equal = 0;
  for (std::size_t i = 0; i < pa.size(); ++i) equal += pa[i] == pb[i] && pa[i] != 0.0f;
  CHECK(equal < 10);

  // He-normal: std sqrt(2/in); the output layer scaled by 0.1; biases zero.
  const auto stddev = [&](std::size_t first, std::size_t n) {
    double sum_sq = 0.0;
    for (std::size_t i = first; i < first + n; ++i) sum_sq += static_cast<double>(pa[i]) * pa[i];
    return std::sqrt(sum_sq / static_cast<double>(n));
  };
  CHECK(stddev(0, 128 * 64) == Approx(std::sqrt(2.0 / 64)).epsilon(0.05));
  CHECK(stddev(a.spans()[1].offset, 10 * 128) == Approx(0.1 * std::sqrt(2.0 / 128)).epsilon(0.1));
  for (std::size_t i = 128 * 64; i < a.spans()[1].offset; ++i) REQUIRE(pa[i] == 0.0f);
  for (std::size_t i = a.spans()[1].offset + 10 * 128; i < pa.size(); ++i) REQUIRE(pa[i] == 0.0f);
}

TEST_CASE("train: synthetic batches are the same on every rank and in any grouping", "[train]") {
  const SyntheticDataset rank0(33, 5, 99), rank1(33, 5, 99), other_seed(33, 5, 100);
  const int count = 16;
  std::vector<float> x(count * 33), y(count * 5);
  rank0.batch(1000, count, x.data(), y.data());
  std::vector<float> xs(count * 33), ys(count * 5);
  for (int s = 0; s < count; ++s) rank1.batch(1000 + s, 1, xs.data() + s * 33, ys.data() + s * 5);
  CHECK(same_bits(x, xs));
  CHECK(same_bits(y, ys));

  other_seed.batch(1000, count, xs.data(), ys.data());
  int equal = 0;
  for (std::size_t i = 0; i < x.size(); ++i) equal += x[i] == xs[i];
  CHECK(equal < 3);
}

TEST_CASE("train: synthetic targets have unit variance and noise_std^2 as loss floor", "[train]") {
  const int in = 32, out = 4, count = 4096;
  const SyntheticDataset clean(in, out, 5, 0.0f), noisy(in, out, 5, 0.1f);
  CHECK(noisy.loss_floor() == Approx(0.01).epsilon(1e-6));
  std::vector<float> x0(count * in), y0(count * out), x1(count * in), y1(count * out);
  // Samples beyond the 2048 that fixed the scale.
  clean.batch(50000, count, x0.data(), y0.data());
  noisy.batch(50000, count, x1.data(), y1.data());
  CHECK(same_bits(x0, x1));  // the noise has its own stream

  double mean = 0.0, sum_sq = 0.0, noise_sq = 0.0;
  for (std::size_t i = 0; i < y0.size(); ++i) {
    mean += y0[i];
    sum_sq += static_cast<double>(y0[i]) * y0[i];
    noise_sq += static_cast<double>(y1[i] - y0[i]) * (y1[i] - y0[i]);
  }
  const double n = static_cast<double>(y0.size());
  mean /= n;
  CHECK(sum_sq / n - mean * mean == Approx(1.0).epsilon(0.1));
  // The best predictor (the teacher itself) reaches the floor.
  CHECK(noise_sq / n == Approx(noisy.loss_floor()).epsilon(0.05));
}

namespace {

// Trains sizes {16, 64, 4} on the synthetic set and returns (loss before, loss after) on
// a held-out batch, as mean squared error.
std::pair<double, double> train_tiny(const OptimizerConfig& config, int steps) {
  auto device = make_cpu_device(1);
  const int batch = 64, in = 16, out = 4;
  MlpModel model(*device, {in, 64, out}, batch);
  model.init(21);
  Optimizer optimizer(*device, config, model.param_count());
  const SyntheticDataset data(in, out, 22);
  std::vector<float> hx(batch * in), hy(batch * out);
  Buffer x(*device, hx.size()), y(*device, hy.size()), dout(*device, hy.size());
  const std::size_t n = static_cast<std::size_t>(batch) * out;
  const auto held_out_mse = [&] {
    data.batch(1'000'000, batch, hx.data(), hy.data());
    x.set(hx);
    y.set(hy);
    return sse(*device, model, x.get(), y.get(), batch) / static_cast<double>(n);
  };
  const double before = held_out_mse();
  for (int step = 0; step < steps; ++step) {
    data.batch(static_cast<std::uint64_t>(step) * batch, batch, hx.data(), hy.data());
    x.set(hx);
    y.set(hy);
    device->squared_error(model.forward(x.get(), batch), y.get(), n, 1.0f / static_cast<float>(n), dout.get());
    model.backward(x.get(), dout.get(), batch, nullptr);
    optimizer.step(model.params(), model.grads(), 1.0f);
  }
  CHECK(optimizer.steps() == steps);
  return {before, held_out_mse()};
}

}  // namespace

TEST_CASE("train: a tiny model learns with SGD and with AdamW", "[train]") {
  SECTION("sgd") {
    OptimizerConfig config;
    config.kind = "sgd";
    config.lr = 0.05f;
    config.momentum = 0.9f;
    const auto [before, after] = train_tiny(config, 200);
    INFO("mse before " << before << ", after " << after);
    CHECK(after < 0.5 * before);
  }
  SECTION("adamw") {
    OptimizerConfig config;
    config.kind = "adamw";
    config.lr = 1e-3f;
    const auto [before, after] = train_tiny(config, 200);
    INFO("mse before " << before << ", after " << after);
    CHECK(after < 0.5 * before);
  }
}

TEST_CASE("train: optimizer updates follow device.h's rules", "[train]") {
  auto device = make_cpu_device(1);
  const std::size_t n = 37;
  std::vector<float> p0(n), g(n);
  for (std::size_t i = 0; i < n; ++i) {
    p0[i] = std::sin(0.7f * static_cast<float>(i)) * 0.5f;
    g[i] = std::cos(1.3f * static_cast<float>(i)) * 3.0f;
  }
  const float grad_scale = 0.25f;
  const int steps = 3;
  Buffer params(*device, p0), grads(*device, g);

  SECTION("sgd with momentum") {
    OptimizerConfig config{.kind = "sgd", .lr = 0.1f, .momentum = 0.9f, .weight_decay = 0.01f};
    Optimizer optimizer(*device, config, n);
    REQUIRE(optimizer.state().size() == 1);
    CHECK(optimizer.state()[0].name == "momentum");
    for (int s = 0; s < steps; ++s) optimizer.step(params.get(), grads.get(), grad_scale);
    const auto p = read(*device, params.get(), n);
    const auto m = read(*device, optimizer.state()[0].data, n);
    for (std::size_t i = 0; i < n; ++i) {
      double rp = p0[i], rm = 0.0;
      for (int s = 0; s < steps; ++s) {
        const double step = g[i] * grad_scale + config.weight_decay * rp;
        rm = config.momentum * rm + step;
        rp -= config.lr * rm;
      }
      REQUIRE(p[i] == Approx(rp).margin(1e-6).epsilon(1e-5));
      REQUIRE(m[i] == Approx(rm).margin(1e-6).epsilon(1e-5));
    }
  }
  SECTION("adamw") {
    OptimizerConfig config{.kind = "adamw", .lr = 0.01f, .weight_decay = 0.1f};
    Optimizer optimizer(*device, config, n);
    REQUIRE(optimizer.state().size() == 2);
    CHECK(optimizer.state()[0].name == "exp_avg");
    CHECK(optimizer.state()[1].name == "exp_avg_sq");
    for (int s = 0; s < steps; ++s) optimizer.step(params.get(), grads.get(), grad_scale);
    CHECK(optimizer.steps() == steps);
    const auto p = read(*device, params.get(), n);
    for (std::size_t i = 0; i < n; ++i) {
      double rp = p0[i], rm = 0.0, rv = 0.0;
      for (int t = 1; t <= steps; ++t) {
        const double gi = g[i] * grad_scale;
        rp -= config.lr * config.weight_decay * rp;
        rm = config.beta1 * rm + (1 - config.beta1) * gi;
        rv = config.beta2 * rv + (1 - config.beta2) * gi * gi;
        const double m_hat = rm / (1 - std::pow(config.beta1, t));
        const double v_hat = rv / (1 - std::pow(config.beta2, t));
        rp -= config.lr * m_hat / (std::sqrt(v_hat) + config.eps);
      }
      REQUIRE(p[i] == Approx(rp).margin(1e-6).epsilon(1e-5));
    }
  }
  SECTION("unknown kind") {
    OptimizerConfig config;
    config.kind = "lion";
    REQUIRE_THROWS_AS(Optimizer(*device, config, n), std::invalid_argument);
  }
}

// The optimizer overlapping the allreduce updates bucket by bucket: it must give the bits
// of one whole step, for both rules, whatever the pieces and their order.
TEST_CASE("train: an optimizer step in pieces equals a whole step, bit for bit", "[train]") {
  auto device = make_cpu_device(1);
  const std::size_t n = 1001;
  std::vector<float> p0(n), g(n);
  for (std::size_t i = 0; i < n; ++i) {
    p0[i] = std::sin(0.7f * static_cast<float>(i)) * 0.5f;
    g[i] = std::cos(1.3f * static_cast<float>(i)) * 3.0f;
  }
  for (const char* kind : {"sgd", "adamw"}) {
    INFO(kind);
    OptimizerConfig config;
    config.kind = kind;
    config.weight_decay = 0.01f;
    Buffer whole_p(*device, p0), pieces_p(*device, p0), grads(*device, g);
    Optimizer whole(*device, config, n), pieces(*device, config, n);
    for (int s = 0; s < 3; ++s) {
      whole.step(whole_p.get(), grads.get(), 0.5f);
      pieces.begin_step();
      pieces.update(pieces_p.get(), grads.get(), 0.5f, 600, 401);  // the last bucket first
      pieces.update(pieces_p.get(), grads.get(), 0.5f, 0, 17);
      pieces.update(pieces_p.get(), grads.get(), 0.5f, 17, 583);
    }
    CHECK(pieces.steps() == whole.steps());
    CHECK(read(*device, pieces_p.get(), n) == read(*device, whole_p.get(), n));
    for (std::size_t b = 0; b < whole.state().size(); ++b)
      CHECK(read(*device, pieces.state()[b].data, n) == read(*device, whole.state()[b].data, n));
    CHECK_THROWS_AS(pieces.update(pieces_p.get(), grads.get(), 0.5f, 1000, 2), std::out_of_range);
  }
}

TEST_CASE("train: cpu device describes itself and measures a GEMM peak", "[train]") {
  auto device = make_cpu_device(1);
  CHECK(device->describe().rfind("cpu (OpenBLAS", 0) == 0);
  CHECK(device->describe().find(", 1 thread)") != std::string::npos);
  // Allocations are zero-filled and 64-byte aligned.
  float* p = device->allocate(5);
  CHECK(reinterpret_cast<std::uintptr_t>(p) % 64 == 0);
  CHECK(read(*device, p, 5) == std::vector<float>(5, 0.0f));
  device->release(p);
  CHECK(measure_gemm_tflops(*device, 128, 0.01) > 0.0);
}

}  // namespace train_math_test
