#include "bench/llm/stream/stream_timeline.h"

#include <algorithm>
#include <utility>

namespace chaosbench::bench::llm {

StreamTimeline::StreamTimeline(Clock::time_point scheduled, std::int64_t prompt_tokens)
    : scheduled_(scheduled), prompt_tokens_(std::max<std::int64_t>(prompt_tokens, 0)) {}

void StreamTimeline::sent(Clock::time_point at) {
  if (!sent_) sent_ = at;
}

void StreamTimeline::first_byte(Clock::time_point at) {
  if (!first_byte_) first_byte_ = at;
}

void StreamTimeline::chunk(Clock::time_point at, std::int64_t tokens) {
  if (end_) return;
  first_byte(at);
  if (tokens > 0) token_chunks_.push_back({at, tokens});
}

void StreamTimeline::usage(std::optional<std::int64_t> prompt_tokens, std::optional<std::int64_t> completion_tokens) {
  // A server's counts are believed up to 2^31 tokens a request (no context is longer); a
  // larger one is ignored, so a lying server cannot overflow the totals.
  constexpr std::int64_t kMostTokens = std::int64_t{1} << 31;
  if (prompt_tokens && *prompt_tokens >= 0 && *prompt_tokens < kMostTokens) usage_prompt_ = prompt_tokens;
  if (completion_tokens && *completion_tokens >= 0 && *completion_tokens < kMostTokens)
    usage_completion_ = completion_tokens;
}

void StreamTimeline::finish(Clock::time_point at) {
  if (!end_) end_ = at;
}

void StreamTimeline::fail(Clock::time_point at, StreamFailure failure, std::string detail) {
  if (end_ || failure == StreamFailure::kNone) return;
  end_ = at;
  failure_ = failure;
  failure_detail_ = std::move(detail);
}

StreamTiming StreamTimeline::timing() const {
  StreamTiming t;
  t.failure = failure_;
  t.failure_detail = failure_detail_;
  if (sent_) t.send_lag = *sent_ - scheduled_;
  if (first_byte_) t.first_byte = *first_byte_ - scheduled_;
  for (const Chunk& c : token_chunks_) t.counted_tokens += c.tokens;
  t.tokens_from_usage = usage_completion_.has_value();
  t.output_tokens = usage_completion_.value_or(t.counted_tokens);
  t.input_tokens = usage_prompt_.value_or(prompt_tokens_);

  // A failed request's e2e is the time to its failure; a completed one ends at its last
  // token (vLLM), or at the finish when no token came.
  if (!token_chunks_.empty() && t.ok()) {
    t.e2e = token_chunks_.back().at - scheduled_;
  } else if (end_) {
    t.e2e = *end_ - scheduled_;
  } else if (!token_chunks_.empty()) {
    t.e2e = token_chunks_.back().at - scheduled_;
  }
  if (token_chunks_.empty()) return t;

  t.ttft = token_chunks_.front().at - scheduled_;
  t.itl.reserve(token_chunks_.size() - 1);
  for (std::size_t i = 1; i < token_chunks_.size(); ++i) t.itl.push_back(token_chunks_[i].at - token_chunks_[i - 1].at);
  // TPOT uses the last token chunk even for a failed stream, so a stream cut short still
  // says how fast it was decoding.
  const auto decode = token_chunks_.back().at - token_chunks_.front().at;
  if (t.output_tokens > 1) t.tpot = decode / (t.output_tokens - 1);
  return t;
}

}  // namespace chaosbench::bench::llm
