// Greedy and nucleus sampling. See token_sampler.h.
#include "bench/llm/transformer/token_sampler.h"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <vector>

#include "bench/llm/transformer/byte_tokenizer.h"
#include "bench/compute/counter_rng.h"

namespace chaosbench::bench::llm {
namespace {

bool allowed(int token, const SamplingParams& p) {
  return token != ByteTokenizer::kBos && !(p.ignore_eos && token == ByteTokenizer::kEos);
}

}  // namespace

int sample_token(const float* logits, int vocab, const SamplingParams& params, std::uint64_t index) {
  int best = -1;
  for (int t = 0; t < vocab; ++t)
    if (allowed(t, params) && (best < 0 || logits[t] > logits[best])) best = t;
  if (params.temperature <= 0.0 || best < 0) return best;
  // Probabilities of the allowed tokens, largest first.
  std::vector<int> order;
  order.reserve(static_cast<std::size_t>(vocab));
  for (int t = 0; t < vocab; ++t)
    if (allowed(t, params)) order.push_back(t);
  std::sort(order.begin(), order.end(), [&](int a, int b) { return logits[a] > logits[b] || (logits[a] == logits[b] && a < b); });
  std::vector<double> p(order.size());
  double sum = 0.0;
  for (std::size_t i = 0; i < order.size(); ++i) {
    p[i] = std::exp((static_cast<double>(logits[order[i]]) - logits[best]) / params.temperature);
    sum += p[i];
  }
  // The nucleus: the fewest largest tokens whose mass reaches top_p.
  std::size_t keep = order.size();
  double mass = 0.0;
  for (std::size_t i = 0; i < order.size(); ++i) {
    mass += p[i] / sum;
    if (mass >= params.top_p) {
      keep = i + 1;
      break;
    }
  }
  const double kept = std::accumulate(p.begin(), p.begin() + static_cast<std::ptrdiff_t>(keep), 0.0);
  // 53 random bits -> a uniform double in [0, 1).
  const std::uint64_t bits = train::random_bits(train::stream_key(params.seed, 0x5a3d1e), index);
  double u = static_cast<double>(bits >> 11) * 0x1.0p-53 * kept;
  for (std::size_t i = 0; i < keep; ++i) {
    if (u < p[i]) return order[i];
    u -= p[i];
  }
  return order[keep - 1];
}

}  // namespace chaosbench::bench::llm
