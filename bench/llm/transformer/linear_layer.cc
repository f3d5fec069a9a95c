// fp32 (OpenBLAS) and int8 (serve's VNNI kernel) matrix products. See linear_layer.h.
#include "bench/llm/transformer/linear_layer.h"

#include <cblas.h>

#include <algorithm>
#include <cstring>
#include <stdexcept>

#include "bench/llm/transformer/float_lanes.h"

namespace chaosbench::bench::llm {
namespace {

// From 2 to this many rows the fp32 product runs in the kernel below, not OpenBLAS: a
// decode step has few rows, and OpenBLAS's sgemm, made for large products, spends about
// as long repacking a weight matrix as reading it (8 rows took 3x one row's sgemv time
// here, 2x in this kernel; at 32 rows both take the same). One row is sgemv's.
constexpr int kSmallRows = 32;

// y[r][c] = x[r] . w[c] for R rows and C channels at once: each 16 floats of a weight row
// are loaded once for R rows, each 16 of an input row once for C channels. Every output
// is summed in kFloatLanes lanes then folded, the same sequence whatever R and C, so a row's
// result does not depend on which rows share its step.
// GCC's generic vectors: one AVX-512 register in the avx512f clone, four SSE ones in
// the default one; the accumulators stay in registers (arrays of floats did not).
using Lanes = float __attribute__((vector_size(kFloatLanes * sizeof(float))));

template <int R, int C>
CHAOSBENCH_LLM_CLONES void dot_tile(const float* __restrict x, int in, const float* __restrict w, float* y,
                                    int out) {
  Lanes acc[R][C] = {};
  int e = 0;
  for (; e + kFloatLanes <= in; e += kFloatLanes) {
    Lanes xv[R];
#pragma GCC unroll 4
    for (int r = 0; r < R; ++r) std::memcpy(&xv[r], x + static_cast<std::size_t>(r) * in + e, sizeof(Lanes));
#pragma GCC unroll 4
    for (int c = 0; c < C; ++c) {
      Lanes wv;
      std::memcpy(&wv, w + static_cast<std::size_t>(c) * in + e, sizeof(Lanes));
#pragma GCC unroll 4
      for (int r = 0; r < R; ++r) acc[r][c] += xv[r] * wv;
    }
  }
  for (int r = 0; r < R; ++r)
    for (int c = 0; c < C; ++c) {
      float sum = 0.0f;
      for (int j = 0; j < kFloatLanes; ++j) sum += acc[r][c][j];
      for (int t = e; t < in; ++t) sum += x[static_cast<std::size_t>(r) * in + t] * w[static_cast<std::size_t>(c) * in + t];
      y[static_cast<std::size_t>(r) * out + c] = sum;
    }
}

// Channels [c0, c1) of y = x W^T for m rows, in 4 x 4 tiles and their edges.
void small_gemm(const float* x, int m, int in, const float* w, int c0, int c1, float* y, int out) {
  int c = c0;
  auto rows = [&](auto tile4, auto tile1, int width) {
    int r = 0;
    for (; r + 4 <= m; r += 4)
      tile4(x + static_cast<std::size_t>(r) * in, in, w + static_cast<std::size_t>(c) * in,
            y + static_cast<std::size_t>(r) * out + c, out);
    for (; r < m; ++r)
      tile1(x + static_cast<std::size_t>(r) * in, in, w + static_cast<std::size_t>(c) * in,
            y + static_cast<std::size_t>(r) * out + c, out);
    c += width;
  };
  while (c + 4 <= c1) rows(dot_tile<4, 4>, dot_tile<1, 4>, 4);
  while (c < c1) rows(dot_tile<4, 1>, dot_tile<1, 1>, 1);
}

}  // namespace

LinearLayer::LinearLayer(std::vector<float> w, int out, int in, bool int8, serve::Int8Path path, int parts)
    : out_(out), in_(in), int8_(int8), path_(path) {
  if (w.size() != static_cast<std::size_t>(out) * in) throw std::invalid_argument("LinearLayer: weights do not fit");
  if (!int8) {
    w_ = std::move(w);
    return;
  }
  const auto q = serve::quantize_channels(w.data(), out, in, channel_scale_);
  const int blocks = (out + 15) / 16;
  parts = std::clamp(parts, 1, blocks);
  for (int p = 0; p < parts; ++p) {
    const int begin = blocks * p / parts * 16, end = std::min(out, blocks * (p + 1) / parts * 16);
    part_begin_.push_back(begin);
    packed_.push_back(serve::pack_int8_weights(q.data() + static_cast<std::size_t>(begin) * in, end - begin, in));
    sums_.insert(sums_.end(), packed_.back().sums.begin(), packed_.back().sums.end());
  }
}

std::size_t LinearLayer::weight_bytes() const {
  if (!int8_) return w_.size() * sizeof(float);
  std::size_t n = channel_scale_.size() * sizeof(float);
  for (const auto& p : packed_) n += p.data.size();
  return n;
}

// Channel ranges of whole 4-channel tiles, one per thread; in each, one row is sgemv's, a
// decode batch the tiled kernel's, more rows (prefill) sgemm's. OpenBLAS runs one thread
// inside each range: its own threads would spin between calls against the engine's.
void LinearLayer::apply_fp32(const float* x, int m, float* y, ParallelRunner* runner) {
  const int parts = runner == nullptr ? 1 : std::min(runner->threads(), std::max(1, out_ / 64));
  auto part = [&](int p) {
    const int c0 = out_ / 4 * p / parts * 4, c1 = p + 1 == parts ? out_ : out_ / 4 * (p + 1) / parts * 4;
    const float* w = w_.data() + static_cast<std::size_t>(c0) * in_;
    if (m == 1) cblas_sgemv(CblasRowMajor, CblasNoTrans, c1 - c0, in_, 1.0f, w, in_, x, 1, 0.0f, y + c0, 1);
    else if (m <= kSmallRows) small_gemm(x, m, in_, w_.data(), c0, c1, y, out_);
    else cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, m, c1 - c0, in_, 1.0f, x, in_, w, in_, 0.0f, y + c0, out_);
  };
  if (parts > 1) runner->run(parts, part);
  else part(0);
}

void LinearLayer::apply(const float* x, int m, float* y, ParallelRunner* runner) {
  if (m <= 0) return;
  if (!int8_) return apply_fp32(x, m, y, runner);
  const int lda = packed_.front().k_padded;
  const auto rows = static_cast<std::size_t>(m);
  if (quantized_.size() < rows * lda) quantized_.assign(rows * lda, 0);  // the padding stays 0
  if (rows_.size() < rows) rows_.resize(rows);
  if (acc_.size() < rows * out_) acc_.resize(rows * out_);
  for (int r = 0; r < m; ++r)
    rows_[r] = serve::quantize_row_u8(x + static_cast<std::size_t>(r) * in_, in_,
                                      quantized_.data() + static_cast<std::size_t>(r) * lda);
  auto part = [&](int p) {
    serve::int8_gemm(quantized_.data(), m, lda, packed_[static_cast<std::size_t>(p)],
                     acc_.data() + part_begin_[static_cast<std::size_t>(p)], out_, path_);
  };
  const int parts = static_cast<int>(packed_.size());
  if (runner != nullptr && parts > 1) runner->run(parts, part);
  else
    for (int p = 0; p < parts; ++p) part(p);
  const float* scale = channel_scale_.data();
  const std::int32_t* sums = sums_.data();
  for (int r = 0; r < m; ++r) {
    const std::int32_t* acc = acc_.data() + static_cast<std::size_t>(r) * out_;
    float* __restrict row = y + static_cast<std::size_t>(r) * out_;
    const float rs = rows_[r].scale;
    const std::int32_t zp = rows_[r].zero_point;
    for (int c = 0; c < out_; ++c) row[c] = static_cast<float>(acc[c] - zp * sums[c]) * (rs * scale[c]);
  }
}

}  // namespace chaosbench::bench::llm
