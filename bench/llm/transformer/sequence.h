// One request inside the transformer engine: its tokens so far (BOS, the prompt, what was
// generated), how many of them have K/V in the cache, and its block table. The scheduler
// moves it between the waiting queue and the running batch; a preemption by recomputation
// frees its blocks and sets `computed` to 0, keeping the tokens, so it resumes by
// prefilling prompt and answer again.
// Threads: touched only on the engine thread.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "bench/llm/transformer/token_sampler.h"

namespace chaosbench::bench::llm {

struct Sequence {
  std::uint64_t id = 0;
  std::vector<int> tokens;  // BOS + prompt + generated
  int prompt_tokens = 0;    // including BOS
  int max_tokens = 0;       // generated tokens at most
  SamplingParams sampling;
  int computed = 0;         // leading tokens whose K/V are cached
  std::vector<int> blocks;  // the block table
  std::shared_ptr<void> owner;  // the engine's per-request state; opaque to the scheduler

  int generated() const { return static_cast<int>(tokens.size()) - prompt_tokens; }
  // Tokens still to run through the model before the next one can be sampled.
  int pending() const { return static_cast<int>(tokens.size()) - computed; }
};

}  // namespace chaosbench::bench::llm
