// Picks a sequence's next token from its logits: greedy (argmax) at temperature 0, else
// a draw from softmax(logits / temperature) restricted to the top_p nucleus (Holtzman et
// al., "The Curious Case of Neural Text Degeneration", 2019). The draw for a sequence's
// i-th generated token is a pure function of (seed, i) (a counter-based generator), so an
// answer is deterministic for a seed whatever the batching, and a sequence recomputed
// after a preemption draws the same tokens again. BOS is never drawn; neither is EOS
// under ignore_eos.
// Pure functions: thread-safe.
#pragma once

#include <cstdint>

namespace chaosbench::bench::llm {

struct SamplingParams {
  double temperature = 0.0;  // 0: greedy
  double top_p = 1.0;        // (0, 1]
  std::uint64_t seed = 0;
  bool ignore_eos = false;
};

// logits: vocab floats.
int sample_token(const float* logits, int vocab, const SamplingParams& params, std::uint64_t index);

}  // namespace chaosbench::bench::llm
