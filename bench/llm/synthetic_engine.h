// A TokenEngine with fixed timing and no model: the ground truth the LLM benchmark is
// checked against. Each request gets its first token `first_token_delay` after it
// arrived, then one token every `cadence`, all on absolute deadlines from the arrival
// (arrival + first_token_delay + i * cadence), so a late timer never pushes the later
// tokens back and no drift accumulates.
// How many tokens: the request's max_tokens when it sets ignore_eos or when `tokens` is 0
// (finish "length"); else min(tokens, max_tokens), finishing "stop" when fewer than
// max_tokens (the synthetic model "ends its answer"), "length" otherwise.
// Token i's text is word i % kWords of a fixed list with a leading space: deterministic,
// so a client can check what it got. Usage counts these words as tokens and the prompt's
// bytes as prompt tokens (the byte-level tokenizer of openai_request.h).
// Threads: each generation runs on its own strand of `ioc` (whose threads the server
// runs); see token_engine.h for the rest of the contract.
#pragma once

#include <atomic>
#include <boost/asio/io_context.hpp>
#include <chrono>
#include <string_view>

#include "bench/llm/token_engine.h"

namespace chaosbench::bench::llm {

struct SyntheticTiming {
  std::chrono::nanoseconds first_token_delay{std::chrono::milliseconds(150)};
  std::chrono::nanoseconds cadence{std::chrono::milliseconds(20)};
  int tokens = 64;  // 0: always the request's max_tokens
};

class SyntheticEngine : public TokenEngine {
 public:
  SyntheticEngine(boost::asio::io_context& ioc, SyntheticTiming timing) : ioc_(ioc), timing_(timing) {}

  std::shared_ptr<Generation> start(const CompletionRequest& request, Clock::time_point arrival,
                                    TokenSink sink) override;
  std::size_t active() const override { return active_.load(); }

  // How many tokens a request gets, and the text of token i (see above).
  int token_count(const CompletionRequest& request) const;
  static std::string_view token_text(int i);

 private:
  boost::asio::io_context& ioc_;
  SyntheticTiming timing_;
  std::atomic<std::size_t> active_{0};
};

}  // namespace chaosbench::bench::llm
