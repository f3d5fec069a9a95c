#include "bench/serve/int8_model.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstddef>
#include <memory>
#include <stdexcept>

namespace chaosbench::bench::serve {
std::vector<std::int8_t> quantize_channels(const float* w, int out, int in, std::vector<float>& scales) {
  std::vector<std::int8_t> q(static_cast<std::size_t>(out) * in);
  scales.assign(static_cast<std::size_t>(out), 1.0f);
  for (int c = 0; c < out; ++c) {
    const float* row = w + static_cast<std::size_t>(c) * in;
    float max_abs = 0.0f;
    for (int i = 0; i < in; ++i) max_abs = std::max(max_abs, std::fabs(row[i]));
    if (max_abs > 0.0f) scales[c] = max_abs / 127.0f;
    const float inv = 1.0f / scales[c];
    for (int i = 0; i < in; ++i) {
      const float v = std::clamp(std::nearbyint(row[i] * inv), -127.0f, 127.0f);
      q[static_cast<std::size_t>(c) * in + i] = static_cast<std::int8_t>(v);
    }
  }
  return q;
}

namespace {

std::string widths_text(const std::vector<int>& widths) {
  std::string text;
  for (const int w : widths) {
    if (!text.empty()) text += '-';
    text += std::to_string(w);
  }
  return text;
}

}  // namespace

// The per-element loops run once per activation, so they matter next to a GEMM of depth
// ~1000: g++ builds them for AVX-512 too and picks a version at load time.
#define CHAOSBENCH_VECTOR_CLONES __attribute__((target_clones("avx512f", "default")))

CHAOSBENCH_VECTOR_CLONES RowQuant quantize_row_u8(const float* x, int n, std::uint8_t* q) {
  // Lane-wise minimum and maximum (a float min/max reduction would not vectorise without
  // -ffast-math); the lanes are folded at the end, so the result is the same.
  constexpr int kWidth = 16;
  std::array<float, kWidth> los{}, his{};
  int i = 0;
  for (; i + kWidth <= n; i += kWidth) {
    for (int j = 0; j < kWidth; ++j) {
      los[j] = std::min(los[j], x[i + j]);
      his[j] = std::max(his[j], x[i + j]);
    }
  }
  float lo = 0.0f;
  float hi = 0.0f;
  for (int j = 0; j < kWidth; ++j) {
    lo = std::min(lo, los[j]);
    hi = std::max(hi, his[j]);
  }
  for (; i < n; ++i) {
    lo = std::min(lo, x[i]);
    hi = std::max(hi, x[i]);
  }
  RowQuant rq;
  if (hi <= lo) {  // all zeros
    std::fill_n(q, n, std::uint8_t{0});
    return rq;
  }
  rq.scale = (hi - lo) / 255.0f;
  const float inv = 1.0f / rq.scale;
  rq.zero_point = static_cast<std::int32_t>(std::clamp(std::nearbyint(-lo * inv), 0.0f, 255.0f));
  const float zp = static_cast<float>(rq.zero_point);
  for (int i = 0; i < n; ++i) {
    // Clamp (as selects, not std::clamp's branches), then round half up by truncating a
    // non-negative value: a loop g++ vectorises.
    float v = x[i] * inv + zp;
    v = v > 0.0f ? v : 0.0f;
    v = v < 255.0f ? v : 255.0f;
    q[i] = static_cast<std::uint8_t>(static_cast<std::int32_t>(v + 0.5f));
  }
  return rq;
}

Int8Model::Int8Model(const ModelWeights& weights, int max_batch, Int8Path path)
    : widths_(weights.layers), max_batch_(max_batch), path_(path) {
  if (widths_.size() < 2) throw std::invalid_argument("Int8Model: needs at least an input and an output width");
  if (max_batch_ < 1) throw std::invalid_argument("Int8Model: max_batch " + std::to_string(max_batch_) + " < 1");
  std::size_t expected = 0;
  for (std::size_t l = 0; l + 1 < widths_.size(); ++l) {
    if (widths_[l] < 1 || widths_[l + 1] < 1) {
      throw std::invalid_argument("Int8Model: bad layer widths " + widths_text(widths_));
    }
    expected += static_cast<std::size_t>(widths_[l + 1]) * widths_[l] + widths_[l + 1];
  }
  if (weights.params.size() != expected) {
    throw std::invalid_argument("Int8Model: " + std::to_string(weights.params.size()) + " parameters, " +
                                widths_text(widths_) + " needs " + std::to_string(expected));
  }
  std::size_t offset = 0;
  int widest_in = 0;
  int widest_out = 0;
  int widest_hidden = 0;
  for (std::size_t l = 0; l + 1 < widths_.size(); ++l) {
    const int in = widths_[l];
    const int out = widths_[l + 1];
    Layer layer;
    const std::vector<std::int8_t> q = quantize_channels(weights.params.data() + offset, out, in, layer.channel_scale);
    layer.weights = pack_int8_weights(q.data(), out, in);
    offset += static_cast<std::size_t>(out) * in;
    layer.bias.assign(weights.params.begin() + static_cast<std::ptrdiff_t>(offset),
                      weights.params.begin() + static_cast<std::ptrdiff_t>(offset + out));
    offset += static_cast<std::size_t>(out);
    layers_.push_back(std::move(layer));
    widest_in = std::max(widest_in, int8_padded_k(in));
    widest_out = std::max(widest_out, out);
    if (l + 2 < widths_.size()) widest_hidden = std::max(widest_hidden, out);
  }
  const auto batch = static_cast<std::size_t>(max_batch_);
  quantized_.assign(batch * widest_in, 0);
  row_quant_.assign(batch, RowQuant{});
  acc_.assign(batch * widest_out, 0);
  hidden_.assign(batch * widest_hidden, 0.0f);
}

void Int8Model::infer(const float* x, int batch, float* y) {
  if (batch < 0 || batch > max_batch_) {
    throw std::invalid_argument("Int8Model::infer: batch " + std::to_string(batch) + " outside 0.." +
                                std::to_string(max_batch_));
  }
  const float* input = x;
  for (std::size_t l = 0; l < layers_.size(); ++l) {
    const Layer& layer = layers_[l];
    const int in = layer.weights.k;
    const int out = layer.weights.n;
    const int lda = layer.weights.k_padded;
    for (int r = 0; r < batch; ++r) {
      row_quant_[r] = quantize_row_u8(input + static_cast<std::size_t>(r) * in, in,
                                      quantized_.data() + static_cast<std::size_t>(r) * lda);
    }
    int8_gemm(quantized_.data(), batch, lda, layer.weights, acc_.data(), out, path_);
    const bool last = l + 1 == layers_.size();
    float* output = last ? y : hidden_.data();  // the next layer's input is quantised already
    for (int r = 0; r < batch; ++r) {
      const std::int32_t* acc = acc_.data() + static_cast<std::size_t>(r) * out;
      float* __restrict row = output + static_cast<std::size_t>(r) * out;
      const float row_scale = row_quant_[r].scale;
      const std::int32_t zp = row_quant_[r].zero_point;
      const std::int32_t* sums = layer.weights.sums.data();
      const float* scale = layer.channel_scale.data();
      const float* bias = layer.bias.data();
      for (int c = 0; c < out; ++c) {
        const float v = static_cast<float>(acc[c] - zp * sums[c]) * (row_scale * scale[c]) + bias[c];
        row[c] = last ? v : std::max(v, 0.0f);
      }
    }
    input = output;
  }
}

std::string Int8Model::describe() const {
  const bool vnni = path_ == Int8Path::kVnni || (path_ == Int8Path::kAuto && vnni_available());
  return "mlp " + widths_text(widths_) + " int8 (per-channel, " + (vnni ? "avx512-vnni" : "portable") + ")";
}

std::unique_ptr<InferenceModel> make_int8_model(const ModelWeights& weights, int max_batch) {
  return std::make_unique<Int8Model>(weights, max_batch);
}

}  // namespace chaosbench::bench::serve
