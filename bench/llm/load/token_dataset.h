// The requests an LLM load run sends: synthetic prompts whose input and output lengths
// are drawn from LengthSpecs (length_sampler.h). Lengths are in tokens of a byte-level
// tokenizer (one byte is one token, as the built-in server's), so a prompt of n tokens is
// n bytes of printable ASCII words; against a server with another tokenizer the count is
// only approximate, and the server's usage field (stream_timeline.h) says the truth.
// Prompts from a file are prompt_file.h.
#pragma once

#include <cstdint>
#include <random>
#include <string>

#include "bench/llm/load/length_sampler.h"

namespace chaosbench::bench::llm {

// One request to send. `max_tokens` is the output length asked for; to force exactly that
// many the request builder also sets `ignore_eos` where the server knows it.
struct LlmRequest {
  std::string prompt;
  std::int64_t input_tokens = 0;  // byte-level: prompt.size()
  std::int64_t max_tokens = 0;
};

class SyntheticDataset {
 public:
  // Throws std::invalid_argument when a spec does not validate. Input and output lengths
  // come from separate generators derived from `seed`, so changing one spec leaves the
  // other's lengths as they were.
  SyntheticDataset(const LengthSpec& input, const LengthSpec& output, std::uint64_t seed);

  LlmRequest next();

  // Exactly `bytes` bytes of lowercase words separated by single spaces, never starting
  // or ending with a space. Deterministic for `rng`'s state.
  static std::string prompt_text(std::int64_t bytes, std::mt19937_64& rng);

 private:
  LengthSampler input_;
  LengthSampler output_;
  std::mt19937_64 text_rng_;
};

}  // namespace chaosbench::bench::llm
