// The synthetic regression set. Every random number is drawn from a counter-based stream
// (counter_rng.h) addressed by sample index and element, so batch(first, count) equals
// count calls of batch(first + s, 1) bit for bit. The teacher's loops run over the hidden
// or output width in the innermost position, where g++ vectorises them without
// reassociating a sum: a sample's values do not depend on the batch it is generated in.
#include "bench/compute/synthetic_data.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <stdexcept>
#include <string>

#include "bench/compute/counter_rng.h"

namespace chaosbench::bench::train {
namespace {

// Stream ids, far from the model's (which counts layers from its own base).
constexpr std::uint64_t kInputs = 0x6461746100000001ULL;  // "data" 1
constexpr std::uint64_t kNoise = 0x6461746100000002ULL;
constexpr std::uint64_t kTeacherW1 = 0x6461746100000003ULL;
constexpr std::uint64_t kTeacherB1 = 0x6461746100000004ULL;
constexpr std::uint64_t kTeacherW2 = 0x6461746100000005ULL;

constexpr int kScaleSamples = 2048;  // samples that fix the output scale
constexpr float kBiasStd = 0.1f;     // "small" hidden biases: tanh stays mostly in its curved range

// Normals are drawn in pairs, so each sample's row starts at an even stream position.
std::uint64_t row_stride(int width) { return static_cast<std::uint64_t>(width + (width & 1)); }

// tanh(x) = sign(x) (1 - e) / (1 + e) with e = exp(-2|x|), the exponential by range
// reduction (e = 2^n exp(r), |r| <= ln2/2 + rounding) and its Taylor series through r^7
// (error < 1e-8). glibc's tanhf is scalar and the teacher needs 32k of them per batch.
// Absolute error ~1e-7; |x| is clamped at 20, where tanh is 1 in float anyway.
void tanh_in_place(float* __restrict v, std::size_t n) {
  constexpr float kLog2e = 1.44269504f;
  constexpr float kLn2Hi = 0.693145752f;  // ln 2 = hi + lo, hi with 12 trailing zero bits so n * hi is exact
  constexpr float kLn2Lo = 1.42860677e-6f;
  for (std::size_t i = 0; i < n; ++i) {
    const float x = v[i];
    // The clamp compares bit patterns (ordered like the values for non-negative floats):
    // g++ will not vectorise a float min without -ffinite-math-only. A NaN becomes 20.
    const float ax = std::bit_cast<float>(
        std::min(std::bit_cast<std::int32_t>(std::fabs(x)), std::bit_cast<std::int32_t>(20.0f)));
    const float y = -2.0f * ax;  // in [-40, 0]
    // Truncation toward zero of t - 0.5 for t <= 0 rounds t to a nearest integer.
    const auto k = static_cast<std::int32_t>(y * kLog2e - 0.5f);
    const float kf = static_cast<float>(k);
    const float r = (y - kf * kLn2Hi) - kf * kLn2Lo;
    const float poly =
        1.0f + r * (1.0f + r * (0.5f + r * (1.0f / 6 + r * (1.0f / 24 + r * (1.0f / 120 + r * (1.0f / 720 + r * (1.0f / 5040)))))));
    const float e = poly * std::bit_cast<float>((k + 127) << 23);  // k >= -58: a normal power of two
    const float t = (1.0f - e) / (1.0f + e);
    v[i] = x < 0.0f ? -t : t;
  }
}

}  // namespace

SyntheticDataset::SyntheticDataset(int input_dim, int output_dim, std::uint64_t seed, float noise_std,
                                   int teacher_hidden)
    : input_dim_(input_dim), output_dim_(output_dim), hidden_(teacher_hidden), seed_(seed), noise_std_(noise_std) {
  if (input_dim_ < 1 || output_dim_ < 1 || hidden_ < 1) {
    throw std::invalid_argument("SyntheticDataset: dimensions must be >= 1 (input " + std::to_string(input_dim_) +
                                ", output " + std::to_string(output_dim_) + ", hidden " + std::to_string(hidden_) +
                                ")");
  }
  if (!(noise_std_ >= 0.0f)) throw std::invalid_argument("SyntheticDataset: noise_std must be >= 0");
  const auto in = static_cast<std::size_t>(input_dim_);
  const auto hidden = static_cast<std::size_t>(hidden_);
  const auto out = static_cast<std::size_t>(output_dim_);
  // w1 is [hidden x in] and w2 [out x hidden] as matrices; they are stored transposed
  // ([in x hidden], [hidden x out]) so that the loops in teacher() run along rows.
  std::vector<float> w1(hidden * in), w2(out * hidden);
  fill_normal(stream_key(seed_, kTeacherW1), 0, w1.data(), w1.size(), 1.0f / std::sqrt(static_cast<float>(in)));
  fill_normal(stream_key(seed_, kTeacherW2), 0, w2.data(), w2.size(), 1.0f / std::sqrt(static_cast<float>(hidden)));
  b1_.resize(hidden);
  fill_normal(stream_key(seed_, kTeacherB1), 0, b1_.data(), hidden, kBiasStd);
  w1_.resize(in * hidden);
  for (std::size_t k = 0; k < hidden; ++k) {
    for (std::size_t j = 0; j < in; ++j) w1_[j * hidden + k] = w1[k * in + j];
  }
  w2_.resize(hidden * out);
  for (std::size_t o = 0; o < out; ++o) {
    for (std::size_t k = 0; k < hidden; ++k) w2_[k * out + o] = w2[o * hidden + k];
  }

  // Unit variance of the noiseless targets, pooled over the output dimensions, measured
  // on the first kScaleSamples samples (the scale is a function of the seed alone).
  std::vector<float> x(kScaleSamples * in), y(kScaleSamples * out);
  out_scale_ = 1.0f;
  for (int s = 0; s < kScaleSamples; ++s) {
    fill_normal(stream_key(seed_, kInputs), s * row_stride(input_dim_), x.data() + s * in, in, 1.0f);
  }
  teacher(x.data(), kScaleSamples, y.data());
  double variance = 0.0;
  for (std::size_t o = 0; o < out; ++o) {
    double sum = 0.0, sum_sq = 0.0;
    for (int s = 0; s < kScaleSamples; ++s) {
      const double v = y[s * out + o];
      sum += v;
      sum_sq += v * v;
    }
    const double mean = sum / kScaleSamples;
    variance += sum_sq / kScaleSamples - mean * mean;
  }
  variance /= static_cast<double>(out);
  if (variance > 0.0) out_scale_ = static_cast<float>(1.0 / std::sqrt(variance));
}

void SyntheticDataset::teacher(const float* x, int count, float* y) const {
  const auto in = static_cast<std::size_t>(input_dim_);
  const auto hidden = static_cast<std::size_t>(hidden_);
  const auto out = static_cast<std::size_t>(output_dim_);
  std::vector<float> h_storage(hidden);
  float* __restrict h = h_storage.data();
  const float* __restrict w1 = w1_.data();
  for (int s = 0; s < count; ++s) {
    const float* __restrict xs = x + s * in;
    float* __restrict ys = y + s * out;
    // h = b1 + W1 x, kBlock hidden units at a time in a local accumulator that stays in
    // registers (twice the speed of updating h in memory for every input); the tail
    // block performs the same operations in the same order.
    constexpr std::size_t kBlock = 16;
    std::size_t k0 = 0;
    for (; k0 + kBlock <= hidden; k0 += kBlock) {
      float acc[kBlock];
      for (std::size_t k = 0; k < kBlock; ++k) acc[k] = b1_[k0 + k];
      for (std::size_t j = 0; j < in; ++j) {
        const float xj = xs[j];
        const float* __restrict row = w1 + j * hidden + k0;
        for (std::size_t k = 0; k < kBlock; ++k) acc[k] += xj * row[k];
      }
      for (std::size_t k = 0; k < kBlock; ++k) h[k0 + k] = acc[k];
    }
    for (std::size_t k = k0; k < hidden; ++k) {
      float acc = b1_[k];
      for (std::size_t j = 0; j < in; ++j) acc += xs[j] * w1[j * hidden + k];
      h[k] = acc;
    }
    tanh_in_place(h, hidden);
    for (std::size_t o = 0; o < out; ++o) ys[o] = 0.0f;
    for (std::size_t k = 0; k < hidden; ++k) {
      const float hk = h[k];
      const float* __restrict row = w2_.data() + k * out;
      for (std::size_t o = 0; o < out; ++o) ys[o] += hk * row[o];
    }
    for (std::size_t o = 0; o < out; ++o) ys[o] *= out_scale_;
  }
}

void SyntheticDataset::inputs(std::uint64_t first, int count, float* x) const {
  if (count < 0) throw std::invalid_argument("SyntheticDataset::inputs: negative count");
  const auto in = static_cast<std::size_t>(input_dim_);
  const std::uint64_t stream = stream_key(seed_, kInputs);
  for (int s = 0; s < count; ++s) fill_normal(stream, (first + s) * row_stride(input_dim_), x + s * in, in, 1.0f);
}

void SyntheticDataset::batch(std::uint64_t first, int count, float* x, float* y) const {
  if (count < 0) throw std::invalid_argument("SyntheticDataset::batch: negative count");
  const auto out = static_cast<std::size_t>(output_dim_);
  inputs(first, count, x);
  teacher(x, count, y);
  if (noise_std_ == 0.0f) return;
  const std::uint64_t noise = stream_key(seed_, kNoise);
  std::vector<float> row(out);
  for (int s = 0; s < count; ++s) {
    fill_normal(noise, (first + s) * row_stride(output_dim_), row.data(), out, noise_std_);
    float* __restrict ys = y + s * out;
    for (std::size_t o = 0; o < out; ++o) ys[o] += row[o];
  }
}

}  // namespace chaosbench::bench::train
