// One weight matrix of the built-in transformer and its product: y[m x out] = x[m x in] W^T,
// W [out x in] row-major (a linear layer without bias).
// fp32, in channel ranges split over the runner's threads (OpenBLAS set to one thread by
// the caller): OpenBLAS's sgemv for one row (the memory-bound decode of a single stream);
// a register-tiled kernel of our own for a decode batch of up to 32 rows (each weight read
// once for every row: where batching gains); OpenBLAS's sgemm above (prefill chunks).
// int8 reuses the serve module's scheme (bench/serve/int8_model.h): per-output-channel
// symmetric weights packed for the VNNI kernel, each input row quantised to uint8 with its
// own scale and zero point, int32 accumulation, dequantised with row scale x channel
// scale; the same bits with or without VNNI. The weights are packed in `parts` channel
// ranges (multiples of 16 channels), one per runner thread: serve's kernel is
// single-threaded, and one core does not draw the memory bandwidth that bounds a single
// stream's decode. The split changes no bits.
// Threads: apply() uses the layer's scratch: one caller at a time (the engine thread).
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "bench/llm/transformer/parallel_runner.h"
#include "bench/serve/int8_gemm.h"
#include "bench/serve/int8_model.h"

namespace chaosbench::bench::llm {

class LinearLayer {
 public:
  LinearLayer() = default;
  // w: [out x in]; int8: quantised here and the fp32 copy dropped, packed in `parts`.
  LinearLayer(std::vector<float> w, int out, int in, bool int8, serve::Int8Path path = serve::Int8Path::kAuto,
              int parts = 1);

  // x: m rows of in floats (stride in); y: m rows of out floats (stride out), overwritten.
  // runner: splits the int8 GEMM over its threads (null: all on the caller).
  void apply(const float* x, int m, float* y, ParallelRunner* runner = nullptr);

  int out() const { return out_; }
  int in() const { return in_; }
  bool int8() const { return int8_; }
  // What one apply() reads of weights (all of them, once): the decode bound's numerator.
  std::size_t weight_bytes() const;

 private:
  void apply_fp32(const float* x, int m, float* y, ParallelRunner* runner);

  int out_ = 0, in_ = 0;
  bool int8_ = false;
  serve::Int8Path path_ = serve::Int8Path::kAuto;
  std::vector<float> w_;                 // fp32
  std::vector<serve::PackedInt8Weights> packed_;  // int8: per channel range
  std::vector<int> part_begin_;          // int8: first channel of each range
  std::vector<std::int32_t> sums_;       // int8: [out] every range's channel sums
  std::vector<float> channel_scale_;     // int8: [out]
  std::vector<std::uint8_t> quantized_;  // int8 scratch: [m x k_padded]
  std::vector<serve::RowQuant> rows_;    // int8 scratch: [m]
  std::vector<std::int32_t> acc_;        // int8 scratch: [m x out]
};

}  // namespace chaosbench::bench::llm
