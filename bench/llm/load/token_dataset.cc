#include "bench/llm/load/token_dataset.h"

namespace chaosbench::bench::llm {
namespace {

// Distinct streams from one seed (splitmix64's increment keeps them far apart).
constexpr std::uint64_t kStream = 0x9E3779B97F4A7C15ULL;

}  // namespace

SyntheticDataset::SyntheticDataset(const LengthSpec& input, const LengthSpec& output, std::uint64_t seed)
    : input_(input, seed), output_(output, seed + kStream), text_rng_(seed + 2 * kStream) {}

LlmRequest SyntheticDataset::next() {
  LlmRequest r;
  r.input_tokens = input_.next();
  r.max_tokens = output_.next();
  r.prompt = prompt_text(r.input_tokens, text_rng_);
  return r;
}

std::string SyntheticDataset::prompt_text(std::int64_t bytes, std::mt19937_64& rng) {
  std::string text;
  if (bytes <= 0) return text;
  text.reserve(static_cast<std::size_t>(bytes));
  std::int64_t word_left = 0;
  for (std::int64_t i = 0; i < bytes; ++i) {
    // A space only between words: not first, not last, never two in a row.
    if (word_left == 0 && i > 0 && i < bytes - 1 && text.back() != ' ') {
      text.push_back(' ');
      continue;
    }
    if (word_left == 0) word_left = 1 + static_cast<std::int64_t>(LengthSampler::uniform01(rng) * 8);
    text.push_back(static_cast<char>('a' + static_cast<int>(LengthSampler::uniform01(rng) * 26)));
    --word_left;
  }
  return text;
}

}  // namespace chaosbench::bench::llm
