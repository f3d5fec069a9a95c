// A pipeline stage's TP shards computing together give the unsplit MLP's
// numbers: the same output, and shard gradients that are the full model's cut the same
// way, over two accumulated microbatches. The TP ranks run in threads with an in-process
// allreduce; the stages hand activations and gradients over by copy, as the pipeline's
// messages would.
#include <catch2/catch.hpp>

#include <barrier>
#include <cmath>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

#include "bench/compute/cpu_device.h"
#include "bench/compute/mlp_model.h"
#include "bench/train/hybrid/stage_model.h"
#include "bench/train/hybrid/stage_plan.h"

namespace stage_model_test {  // this file's names, apart in a unity batch (tests/CMakeLists.txt)

using namespace chaosbench::bench::train;

namespace {

// Sum over `n` threads of their buffers, in place: every caller leaves with the sum.
class LocalAllreduce {
 public:
  explicit LocalAllreduce(int n) : n_(n), arrive_(n), sum_(n) {}
  void operator()(int rank, float* data, std::size_t count) {
    if (rank == 0) total_.assign(count, 0.0f);
    arrive_.arrive_and_wait();
    {
      const std::lock_guard<std::mutex> lock(mutex_);
      for (std::size_t i = 0; i < count; ++i) total_[i] += data[i];
    }
    sum_.arrive_and_wait();
    std::copy(total_.begin(), total_.end(), data);
    arrive_.arrive_and_wait();  // nobody resets total_ before every rank has read it
  }

 private:
  int n_;
  std::barrier<> arrive_, sum_;
  std::mutex mutex_;
  std::vector<float> total_;
};

float max_rel_diff(const std::vector<float>& a, const std::vector<float>& b) {
  float worst = 0.0f, scale = 1e-6f;
  for (float v : b) scale = std::max(scale, std::abs(v));
  for (std::size_t i = 0; i < a.size(); ++i) worst = std::max(worst, std::abs(a[i] - b[i]) / scale);
  return worst;
}

}  // namespace

TEST_CASE("stage model: tp 2 × pp 2 shards give the unsplit MLP's output and gradients", "[parallel]") {
  const std::vector<int> widths{12, 16, 10, 8, 6};  // 4 layers: a column/row pair per stage
  const int tp = 2, micro = 3, micro_batches = 2, batch = micro * micro_batches;
  const auto plans = plan_stages(widths, 2, tp);
  const auto full_device = make_cpu_device(1);
  MlpModel full(*full_device, widths, batch);
  full.init(7);
  std::vector<float> x(static_cast<std::size_t>(batch) * 12), dout(static_cast<std::size_t>(batch) * 6);
  for (std::size_t i = 0; i < x.size(); ++i) x[i] = std::sin(0.37f * static_cast<float>(i));
  for (std::size_t i = 0; i < dout.size(); ++i) dout[i] = 0.1f * std::cos(0.23f * static_cast<float>(i));
  const std::vector<float> expected_out(full.forward(x.data(), batch), full.forward(x.data(), batch) + dout.size());
  full.backward(x.data(), dout.data(), batch, nullptr);
  const std::vector<float> full_grads(full.grads(), full.grads() + full.param_count());

  std::vector<float> out(dout.size());
  std::vector<std::vector<float>> shard_grads(4);
  LocalAllreduce reduce0(tp), reduce1(tp);
  std::vector<float> act(static_cast<std::size_t>(batch) * 10), grad_back(static_cast<std::size_t>(batch) * 10);
  std::barrier<> handover(2 * tp);  // stage 0 forward, stage 1 forward+backward, stage 0 backward
  const std::size_t boundary_rows = static_cast<std::size_t>(micro) * 10;
  auto rank = [&](int stage, int t) {
    const auto device = make_cpu_device(1);
    StageModel m(*device, widths, plans[static_cast<std::size_t>(stage)], tp, t, micro, micro_batches);
    m.init(7);
    LocalAllreduce& reduce = stage == 0 ? reduce0 : reduce1;
    const TpAllreduce ar = [&](float* d, std::size_t n) { reduce(t, d, n); };
    for (int mb = 0; mb < micro_batches; ++mb) {
      const std::size_t row0 = static_cast<std::size_t>(mb) * micro;
      if (stage == 0) {
        const float* y = m.forward(mb, x.data() + row0 * 12, micro, ar);
        if (t == 0) std::copy_n(y, micro * 10, act.begin() + static_cast<std::ptrdiff_t>(row0 * 10));
      }
      handover.arrive_and_wait();
      if (stage == 1) {
        std::vector<float> in(act.begin() + static_cast<std::ptrdiff_t>(row0 * 10),
                              act.begin() + static_cast<std::ptrdiff_t>(row0 * 10 + boundary_rows));
        const float* y = m.forward(mb, in.data(), micro, ar);
        if (t == 0) std::copy_n(y, micro * 6, out.begin() + static_cast<std::ptrdiff_t>(row0 * 6));
        std::vector<float> dy(dout.begin() + static_cast<std::ptrdiff_t>(row0 * 6),
                              dout.begin() + static_cast<std::ptrdiff_t>(row0 * 6 + micro * 6));
        const float* g = m.backward(mb, in.data(), dy.data(), micro, mb > 0, ar, nullptr);
        if (t == 0) std::copy_n(g, micro * 10, grad_back.begin() + static_cast<std::ptrdiff_t>(row0 * 10));
      }
      handover.arrive_and_wait();
      if (stage == 0) {
        std::vector<float> dy(grad_back.begin() + static_cast<std::ptrdiff_t>(row0 * 10),
                              grad_back.begin() + static_cast<std::ptrdiff_t>(row0 * 10 + boundary_rows));
        CHECK(m.backward(mb, x.data() + row0 * 12, dy.data(), micro, mb > 0, ar, nullptr) == nullptr);
      }
    }
    shard_grads[static_cast<std::size_t>(stage * tp + t)].assign(m.grads(), m.grads() + m.param_count());
  };
  std::vector<std::thread> threads;
  for (int s = 0; s < 2; ++s)
    for (int t = 0; t < tp; ++t) threads.emplace_back(rank, s, t);
  for (auto& th : threads) th.join();
  CHECK(max_rel_diff(out, expected_out) < 1e-5f);

  // The full model's gradients, cut as the shards are: layer l's weight [out x in], bias.
  for (int stage = 0; stage < 2; ++stage) {
    for (int t = 0; t < tp; ++t) {
      std::vector<float> cut;
      for (int l = 2 * stage; l < 2 * stage + 2; ++l) {
        const int in = widths[static_cast<std::size_t>(l)], o = widths[static_cast<std::size_t>(l) + 1];
        const float* w = full_grads.data() + full.spans()[static_cast<std::size_t>(l)].offset;
        const bool column = l % 2 == 0;
        const int rows = column ? o / tp : o, cols = column ? in : in / tp;
        for (int r = 0; r < rows; ++r)
          for (int c = 0; c < cols; ++c)
            cut.push_back(column ? w[(t * rows + r) * in + c] : w[r * in + t * cols + c]);
        for (int r = 0; r < rows; ++r) cut.push_back(w[o * in + (column ? t * rows + r : r)]);
      }
      INFO("stage " << stage << " tp rank " << t);
      CHECK(max_rel_diff(shard_grads[static_cast<std::size_t>(stage * tp + t)], cut) < 1e-5f);
    }
  }
}

}  // namespace stage_model_test
