// The int8 InferenceModel (make_int8_model in inference_model.h): each layer's weights are
// quantised once with one symmetric scale per output channel (max|w| / 127); each layer's
// input rows are quantised at run time to uint8 with a per-row scale and zero point
// (asymmetric, so ReLU outputs use all 256 levels and the signed first input loses
// nothing); int8_gemm accumulates in int32, and the result is dequantised with
// row scale x channel scale, the zero point removed through the weights' channel sums, the
// fp32 bias added, and ReLU applied between layers. Output is fp32. Deterministic: the
// same weights and inputs give the same bits on either GEMM path.
// Threads: as InferenceModel (one infer() at a time per object).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "bench/serve/inference_model.h"
#include "bench/serve/int8_gemm.h"

namespace chaosbench::bench::serve {

// One row's uint8 quantisation: x ~= scale * (q - zero_point).
struct RowQuant {
  float scale = 1.0f;
  std::int32_t zero_point = 0;
};

// w [out x in] row-major -> int8 [out x in] with one symmetric scale per row (output
// channel): scales[c] = max|w[c]| / 127 (1 for an all-zero row). Also the LLM engine's.
std::vector<std::int8_t> quantize_channels(const float* w, int out, int in, std::vector<float>& scales);

// Quantises x[0..n) to q[0..n); the range always includes 0, so 0 stays exact.
RowQuant quantize_row_u8(const float* x, int n, std::uint8_t* q);

class Int8Model final : public InferenceModel {
 public:
  // Throws std::invalid_argument when `weights.params` does not fit `weights.layers` or
  // max_batch < 1. `path` picks the GEMM (tests force the portable one).
  Int8Model(const ModelWeights& weights, int max_batch, Int8Path path = Int8Path::kAuto);

  int input_dim() const override { return widths_.front(); }
  int output_dim() const override { return widths_.back(); }
  int max_batch() const override { return max_batch_; }
  void infer(const float* x, int batch, float* y) override;
  std::string describe() const override;

 private:
  struct Layer {
    PackedInt8Weights weights;
    std::vector<float> channel_scale;  // [out]
    std::vector<float> bias;           // [out]
  };

  std::vector<int> widths_;
  int max_batch_;
  Int8Path path_;
  std::vector<Layer> layers_;
  std::vector<std::uint8_t> quantized_;  // [max_batch x padded widest input]
  std::vector<RowQuant> row_quant_;      // [max_batch]
  std::vector<std::int32_t> acc_;        // [max_batch x widest output]
  std::vector<float> hidden_;            // [max_batch x widest hidden layer]
};

}  // namespace chaosbench::bench::serve
