#include "bench/llm/stream/openai_stream.h"

namespace chaosbench::bench::llm {

const OpenAiChunk &OpenAiStream::on_event(const SseEvent &event) {
  ++events_;
  if (done_) {
    ++late_events_;
    last_ = OpenAiChunk{};
    last_.message = "event after [DONE]";
    return last_;
  }
  last_ = parse_openai_chunk(event.data, endpoint_, event.type);
  switch (last_.kind) {
    case OpenAiChunk::Kind::kDone:
      done_ = true;
      break;
    case OpenAiChunk::Kind::kError:
      if (!error_) error_ = last_.message;
      break;
    case OpenAiChunk::Kind::kMalformed:
      ++malformed_;
      break;
    case OpenAiChunk::Kind::kChunk:
      if (last_.has_text()) {
        ++text_chunks_;
        text_bytes_ += last_.text.size();
      }
      if (last_.prompt_tokens) prompt_tokens_ = last_.prompt_tokens;
      if (last_.completion_tokens) completion_tokens_ = last_.completion_tokens;
      if (last_.finish_reason) finish_reason_ = last_.finish_reason;
      break;
  }
  return last_;
}

}  // namespace chaosbench::bench::llm
