// fp32 (OpenBLAS) and int8 (serve's VNNI kernel) matrix products. See linear_layer.h.
#include "bench/llm/transformer/linear_layer.h"

#include <cblas.h>

#include <stdexcept>

namespace chaosbench::bench::llm {

LinearLayer::LinearLayer(std::vector<float> w, int out, int in, bool int8, serve::Int8Path path)
    : out_(out), in_(in), int8_(int8), path_(path) {
  if (w.size() != static_cast<std::size_t>(out) * in) throw std::invalid_argument("LinearLayer: weights do not fit");
  if (!int8) {
    w_ = std::move(w);
    return;
  }
  const auto q = serve::quantize_channels(w.data(), out, in, channel_scale_);
  packed_ = serve::pack_int8_weights(q.data(), out, in);
}

std::size_t LinearLayer::weight_bytes() const {
  return int8_ ? packed_.data.size() + channel_scale_.size() * sizeof(float) : w_.size() * sizeof(float);
}

void LinearLayer::apply(const float* x, int m, float* y) {
  if (m <= 0) return;
  if (!int8_) {
    if (m == 1) {
      cblas_sgemv(CblasRowMajor, CblasNoTrans, out_, in_, 1.0f, w_.data(), in_, x, 1, 0.0f, y, 1);
    } else {
      cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, m, out_, in_, 1.0f, x, in_, w_.data(), in_, 0.0f, y,
                  out_);
    }
    return;
  }
  const int lda = packed_.k_padded;
  const auto rows = static_cast<std::size_t>(m);
  if (quantized_.size() < rows * lda) quantized_.assign(rows * lda, 0);  // the padding stays 0
  if (rows_.size() < rows) rows_.resize(rows);
  if (acc_.size() < rows * out_) acc_.resize(rows * out_);
  for (int r = 0; r < m; ++r)
    rows_[r] = serve::quantize_row_u8(x + static_cast<std::size_t>(r) * in_, in_,
                                      quantized_.data() + static_cast<std::size_t>(r) * lda);
  serve::int8_gemm(quantized_.data(), m, lda, packed_, acc_.data(), out_, path_);
  const float* scale = channel_scale_.data();
  const std::int32_t* sums = packed_.sums.data();
  for (int r = 0; r < m; ++r) {
    const std::int32_t* acc = acc_.data() + static_cast<std::size_t>(r) * out_;
    float* __restrict row = y + static_cast<std::size_t>(r) * out_;
    const float rs = rows_[r].scale;
    const std::int32_t zp = rows_[r].zero_point;
    for (int c = 0; c < out_; ++c) row[c] = static_cast<float>(acc[c] - zp * sums[c]) * (rs * scale[c]);
  }
}

}  // namespace chaosbench::bench::llm
