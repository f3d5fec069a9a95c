// The built-in LLM server's model: a decoder-only transformer on the CPU with seeded
// weights (deterministic for a seed; no checkpoint), over the byte tokenizer's vocabulary.
// Per layer: RMSNorm (Zhang & Sennrich 2019), fused Q/K/V projection, rotary positions
// (RoFormer, Su et al. 2021; pairs (2i, 2i+1) of a head rotated by pos x 10000^(-2i/d)),
// grouped-query attention (Ainslie et al. 2023; heads / kv_heads query heads share a K/V
// head) reading K/V through the paged cache's block tables, output projection, RMSNorm,
// SwiGLU MLP (Shazeer 2020: down(silu(gate x) * up x)) with gate and up fused, residuals
// around both. A final RMSNorm and a separate (untied) LM head give the logits.
// forward() runs one scheduler iteration: every segment's tokens are rows of the same
// activations, so each weight matrix is one GEMM for the whole step (decodes and prefill
// chunks together). The GEMMs' output channels and the attention's rows are split over
// the model's `threads` (parallel_runner.h); the result does not depend on their count.
// Threads: one forward() at a time (the engine thread); the weights are immutable.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "bench/llm/llm_serve_settings.h"
#include "bench/llm/transformer/forward_segment.h"
#include "bench/llm/transformer/linear_layer.h"
#include "bench/llm/transformer/parallel_runner.h"
#include "bench/llm/transformer/paged_kv_cache.h"

namespace chaosbench::bench::llm {

class TransformerModel {
 public:
  using Shape = LlmServeSettings::Model;
  // max_positions: the largest position + 1 a sequence may reach (the rotary table's
  // length). Throws std::invalid_argument for a shape validate() would refuse.
  TransformerModel(const Shape& shape, std::uint64_t seed, int max_positions,
                   serve::Int8Path path = serve::Int8Path::kAuto, int threads = 1);

  // Writes every segment's K/V into `cache` (at its block table) and overwrites `logits`
  // with one row of vocab() floats per segment that wants them, in segment order.
  void forward(std::span<const ForwardSegment> segments, PagedKvCache& cache, std::vector<float>& logits);

  // A cache shaped for this model.
  PagedKvCache make_cache(int blocks, int block_size) const;

  const Shape& shape() const { return shape_; }
  int vocab() const;
  int head_dim() const { return shape_.dim / shape_.heads; }
  int kv_dim() const { return shape_.kv_heads * head_dim(); }
  int max_positions() const { return max_positions_; }
  // Weight bytes one forward reads (every matrix once, the embedding rows aside).
  std::size_t weight_bytes() const;
  std::string describe() const;

 private:
  struct Layer {
    std::vector<float> attn_norm, mlp_norm;
    LinearLayer qkv, out, gate_up, down;
  };
  void embed(std::span<const ForwardSegment> segments);
  void rope(float* v, int heads, int pos) const;
  void store_kv(std::span<const ForwardSegment> segments, PagedKvCache& cache, int layer);
  void attention(const PagedKvCache& cache, int layer, int rows);
  void mlp(Layer& layer, int rows);

  Shape shape_;
  int max_positions_;
  std::vector<float> embedding_;  // [vocab x dim]
  std::vector<Layer> layers_;
  std::vector<float> final_norm_;
  LinearLayer lm_head_;
  std::vector<float> rope_cos_, rope_sin_;  // [max_positions x head_dim / 2]
  // Scratch, grown to the largest step: rows x widths.
  std::vector<float> x_, h_, qkv_, attn_, tmp_, gu_, act_, last_;
  std::vector<std::vector<float>> scores_;  // per thread: one row's attention scores
  std::vector<const int*> row_table_;       // per row: its sequence's block table
  std::vector<int> row_pos_;                // per row: its position
  std::unique_ptr<ParallelRunner> runner_;
};

}  // namespace chaosbench::bench::llm
