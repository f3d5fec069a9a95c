// The transformer's forward pass. See transformer_model.h.
#include "bench/llm/transformer/transformer_model.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "bench/llm/transformer/byte_tokenizer.h"
#include "bench/llm/transformer/float_lanes.h"
#include "bench/compute/counter_rng.h"

namespace chaosbench::bench::llm {
namespace {

constexpr float kNormEps = 1e-5f;
constexpr double kRopeBase = 10000.0;

// Weight matrix `stream` of the seed: normals with stddev `scale`.
std::vector<float> seeded(std::uint64_t seed, std::uint64_t stream, std::size_t n, float scale) {
  std::vector<float> w(n);
  train::fill_normal(train::stream_key(seed, stream), 0, w.data(), n, scale);
  return w;
}

// out = x / rms(x) * gain, for `rows` rows of n.
void rms_norm(const float* x, const float* gain, int rows, int n, float* out) {
  for (int r = 0; r < rows; ++r) {
    const float* __restrict xr = x + static_cast<std::size_t>(r) * n;
    float* __restrict o = out + static_cast<std::size_t>(r) * n;
    float ss = 0.0f;
    for (int i = 0; i < n; ++i) ss += xr[i] * xr[i];
    const float inv = 1.0f / std::sqrt(ss / static_cast<float>(n) + kNormEps);
    for (int i = 0; i < n; ++i) o[i] = xr[i] * inv * gain[i];
  }
}

void add_into(float* __restrict x, const float* __restrict y, std::size_t n) {
  for (std::size_t i = 0; i < n; ++i) x[i] += y[i];
}

// The attention's per-position loops run rows x heads x positions times a step, far more
// calls than any GEMM: g++ builds them for AVX-512 too and picks a version at load time
// (CHAOSBENCH_LLM_CLONES, float_lanes.h).

// q . k over n floats, summed in kFloatLanes independent lanes then folded (float_lanes.h).
inline float lane_dot(const float* __restrict q, const float* __restrict k, int n) {
  float acc[kFloatLanes] = {};
  int e = 0;
  for (; e + kFloatLanes <= n; e += kFloatLanes)
    for (int j = 0; j < kFloatLanes; ++j) acc[j] += q[e + j] * k[e + j];
  float dot = 0.0f;
  for (int j = 0; j < kFloatLanes; ++j) dot += acc[j];
  for (; e < n; ++e) dot += q[e] * k[e];
  return dot;
}

struct AttentionShape {
  int heads, group, head_dim, block_size;
};

// One query row at `pos`: every head attends to positions 0..pos (causal) through the
// block table; `out` gets heads x head_dim floats; `scores` holds pos + 1 floats.
CHAOSBENCH_LLM_CLONES void attend(const float* q, const PagedKvCache& cache, int layer, const int* table, int pos,
                                  const AttentionShape& a, float* __restrict scores, float* out) {
  const int hd = a.head_dim, bs = a.block_size, n = pos + 1;
  const float scale = 1.0f / std::sqrt(static_cast<float>(hd));
  for (int h = 0; h < a.heads; ++h) {
    const float* qh = q + static_cast<std::size_t>(h) * hd;
    const int kvo = (h / a.group) * hd;
    float max = -INFINITY;
    for (int j = 0; j < n; ++j) {
      scores[j] = lane_dot(qh, cache.key(layer, table[j / bs], j % bs) + kvo, hd) * scale;
      max = std::max(max, scores[j]);
    }
    float sum = 0.0f;
    for (int j = 0; j < n; ++j) {
      scores[j] = std::exp(scores[j] - max);
      sum += scores[j];
    }
    float* __restrict o = out + static_cast<std::size_t>(h) * hd;
    std::fill_n(o, hd, 0.0f);
    const float inv = 1.0f / sum;
    for (int j = 0; j < n; ++j) {
      const float* __restrict v = cache.value(layer, table[j / bs], j % bs) + kvo;
      const float p = scores[j] * inv;
      for (int e = 0; e < hd; ++e) o[e] += p * v[e];
    }
  }
}

int total_rows(std::span<const ForwardSegment> segments) {
  int t = 0;
  for (const auto& s : segments) t += s.count;
  return t;
}

}  // namespace

TransformerModel::TransformerModel(const Shape& shape, std::uint64_t seed, int max_positions, serve::Int8Path path,
                                   int threads)
    : shape_(shape), max_positions_(max_positions), runner_(std::make_unique<ParallelRunner>(threads)) {
  if (shape.layers < 1 || shape.dim < 2 || shape.heads < 1 || shape.kv_heads < 1 || shape.ffn < 1 ||
      shape.dim % shape.heads != 0 || head_dim() % 2 != 0 || shape.heads % shape.kv_heads != 0 || max_positions < 1)
    throw std::invalid_argument("TransformerModel: bad shape");
  const bool int8 = shape.dtype == "int8";
  const int t = runner_->threads();
  const int d = shape.dim, f = shape.ffn, kv = kv_dim(), v = vocab();
  // GPT-2's initialisation: 1/sqrt(fan-in), residual outputs scaled down by sqrt(2 x layers)
  // so the residual stream does not grow with depth.
  const float in_d = 1.0f / std::sqrt(static_cast<float>(d));
  const float resid = 1.0f / std::sqrt(2.0f * static_cast<float>(shape.layers));
  embedding_ = seeded(seed, 1, static_cast<std::size_t>(v) * d, 1.0f);
  for (int l = 0; l < shape.layers; ++l) {
    const std::uint64_t s = 16 + 8 * static_cast<std::uint64_t>(l);
    Layer layer;
    layer.attn_norm.assign(static_cast<std::size_t>(d), 1.0f);
    layer.mlp_norm.assign(static_cast<std::size_t>(d), 1.0f);
    layer.qkv = LinearLayer(seeded(seed, s, static_cast<std::size_t>(d + 2 * kv) * d, in_d), d + 2 * kv, d, int8,
                            path, t);
    layer.out = LinearLayer(seeded(seed, s + 1, static_cast<std::size_t>(d) * d, in_d * resid), d, d, int8, path, t);
    layer.gate_up = LinearLayer(seeded(seed, s + 2, static_cast<std::size_t>(2 * f) * d, in_d), 2 * f, d, int8,
                                path, t);
    layer.down = LinearLayer(seeded(seed, s + 3, static_cast<std::size_t>(d) * f,
                                    resid / std::sqrt(static_cast<float>(f))),
                             d, f, int8, path, t);
    layers_.push_back(std::move(layer));
  }
  final_norm_.assign(static_cast<std::size_t>(d), 1.0f);
  // Logits of about unit spread, so sampling at temperature 1 is neither flat nor one-hot.
  lm_head_ = LinearLayer(seeded(seed, 2, static_cast<std::size_t>(v) * d, in_d * 2.0f), v, d, int8, path, t);
  const int half = head_dim() / 2;
  rope_cos_.resize(static_cast<std::size_t>(max_positions) * half);
  rope_sin_.resize(rope_cos_.size());
  for (int p = 0; p < max_positions; ++p)
    for (int i = 0; i < half; ++i) {
      const double angle = p * std::pow(kRopeBase, -2.0 * i / head_dim());
      rope_cos_[static_cast<std::size_t>(p) * half + i] = static_cast<float>(std::cos(angle));
      rope_sin_[static_cast<std::size_t>(p) * half + i] = static_cast<float>(std::sin(angle));
    }
}

int TransformerModel::vocab() const { return ByteTokenizer::kVocab; }

PagedKvCache TransformerModel::make_cache(int blocks, int block_size) const {
  return PagedKvCache(shape_.layers, blocks, block_size, kv_dim());
}

std::size_t TransformerModel::weight_bytes() const {
  std::size_t n = lm_head_.weight_bytes();
  for (const auto& l : layers_)
    n += l.qkv.weight_bytes() + l.out.weight_bytes() + l.gate_up.weight_bytes() + l.down.weight_bytes();
  return n;
}

std::string TransformerModel::describe() const {
  return fmt::format("transformer {} layers, dim {}, {} heads ({} kv), ffn {}, {} ({:.1f} MB of weights)",
                     shape_.layers, shape_.dim, shape_.heads, shape_.kv_heads, shape_.ffn, shape_.dtype,
                     static_cast<double>(weight_bytes()) / 1e6);
}

void TransformerModel::embed(std::span<const ForwardSegment> segments) {
  const int d = shape_.dim;
  std::size_t row = 0;
  for (const auto& s : segments)
    for (int i = 0; i < s.count; ++i, ++row) {
      const int t = s.tokens[i];
      if (t < 0 || t >= vocab()) throw std::invalid_argument(fmt::format("TransformerModel: token {} out of range", t));
      if (s.start + i >= max_positions_) throw std::invalid_argument("TransformerModel: position past the context");
      std::copy_n(embedding_.data() + static_cast<std::size_t>(t) * d, d, x_.data() + row * d);
      row_table_[row] = s.block_table;
      row_pos_[row] = s.start + i;
    }
}

// Rotates each head's pairs (2i, 2i+1) of v by pos x theta_i.
void TransformerModel::rope(float* v, int heads, int pos) const {
  const int hd = head_dim(), half = hd / 2;
  const float* c = rope_cos_.data() + static_cast<std::size_t>(pos) * half;
  const float* s = rope_sin_.data() + static_cast<std::size_t>(pos) * half;
  for (int h = 0; h < heads; ++h) {
    float* x = v + static_cast<std::size_t>(h) * hd;
    for (int i = 0; i < half; ++i) {
      const float a = x[2 * i], b = x[2 * i + 1];
      x[2 * i] = a * c[i] - b * s[i];
      x[2 * i + 1] = a * s[i] + b * c[i];
    }
  }
}

// Rotary positions on this layer's Q and K, then K and V into the cache at each row's slot.
void TransformerModel::store_kv(std::span<const ForwardSegment> segments, PagedKvCache& cache, int layer) {
  const int d = shape_.dim, kv = kv_dim(), width = d + 2 * kv, bs = cache.block_size();
  std::size_t row = 0;
  for (const auto& s : segments)
    for (int i = 0; i < s.count; ++i, ++row) {
      float* q = qkv_.data() + row * width;
      const int pos = s.start + i;
      rope(q, shape_.heads, pos);
      rope(q + d, shape_.kv_heads, pos);
      const int block = s.block_table[pos / bs], slot = pos % bs;
      std::copy_n(q + d, kv, cache.key(layer, block, slot));
      std::copy_n(q + d + kv, kv, cache.value(layer, block, slot));
    }
}

// Rows are independent given the cache (store_kv ran first): split over the threads.
void TransformerModel::attention(const PagedKvCache& cache, int layer, int rows) {
  const int d = shape_.dim, width = d + 2 * kv_dim();
  const AttentionShape shape{shape_.heads, shape_.heads / shape_.kv_heads, head_dim(), cache.block_size()};
  const int parts = std::min(rows, runner_->threads());
  runner_->run(parts, [&](int part) {
    float* scores = scores_[static_cast<std::size_t>(part)].data();
    for (int r = rows * part / parts; r < rows * (part + 1) / parts; ++r) {
      const auto row = static_cast<std::size_t>(r);
      attend(qkv_.data() + row * width, cache, layer, row_table_[row], row_pos_[row], shape, scores,
             attn_.data() + row * d);
    }
  });
}

// x += down(silu(gate h) * up h), h = RMSNorm(x).
void TransformerModel::mlp(Layer& layer, int rows) {
  const int d = shape_.dim, f = shape_.ffn;
  rms_norm(x_.data(), layer.mlp_norm.data(), rows, d, h_.data());
  layer.gate_up.apply(h_.data(), rows, gu_.data(), runner_.get());
  for (int r = 0; r < rows; ++r) {
    const float* __restrict g = gu_.data() + static_cast<std::size_t>(r) * 2 * f;
    const float* __restrict u = g + f;
    float* __restrict a = act_.data() + static_cast<std::size_t>(r) * f;
    for (int i = 0; i < f; ++i) a[i] = g[i] / (1.0f + std::exp(-g[i])) * u[i];
  }
  layer.down.apply(act_.data(), rows, tmp_.data(), runner_.get());
  add_into(x_.data(), tmp_.data(), static_cast<std::size_t>(rows) * d);
}

void TransformerModel::forward(std::span<const ForwardSegment> segments, PagedKvCache& cache,
                               std::vector<float>& logits) {
  const int rows = total_rows(segments);
  const int d = shape_.dim, f = shape_.ffn, width = d + 2 * kv_dim();
  const auto n = static_cast<std::size_t>(rows);
  for (auto* v : {&x_, &h_, &attn_, &tmp_}) v->resize(n * d);
  qkv_.resize(n * width);
  gu_.resize(n * 2 * f);
  act_.resize(n * f);
  row_table_.resize(n);
  row_pos_.resize(n);
  int longest = 0;
  for (const auto& s : segments) longest = std::max(longest, s.start + s.count);
  scores_.resize(static_cast<std::size_t>(runner_->threads()));
  for (auto& sc : scores_)
    if (sc.size() < static_cast<std::size_t>(longest)) sc.resize(static_cast<std::size_t>(longest));
  embed(segments);
  for (int l = 0; l < shape_.layers; ++l) {
    Layer& layer = layers_[static_cast<std::size_t>(l)];
    rms_norm(x_.data(), layer.attn_norm.data(), rows, d, h_.data());
    layer.qkv.apply(h_.data(), rows, qkv_.data(), runner_.get());
    store_kv(segments, cache, l);
    attention(cache, l, rows);
    layer.out.apply(attn_.data(), rows, tmp_.data(), runner_.get());
    add_into(x_.data(), tmp_.data(), n * d);
    mlp(layer, rows);
  }
  // Only the rows whose next token is sampled go through the LM head.
  std::size_t row = 0, wanted = 0;
  last_.resize(segments.size() * static_cast<std::size_t>(d));
  for (const auto& s : segments) {
    row += static_cast<std::size_t>(s.count);
    if (s.want_logits) std::copy_n(x_.data() + (row - 1) * d, d, last_.data() + wanted++ * d);
  }
  rms_norm(last_.data(), final_norm_.data(), static_cast<int>(wanted), d, h_.data());
  logits.resize(wanted * static_cast<std::size_t>(vocab()));
  lm_head_.apply(h_.data(), static_cast<int>(wanted), logits.data(), runner_.get());
}

}  // namespace chaosbench::bench::llm
