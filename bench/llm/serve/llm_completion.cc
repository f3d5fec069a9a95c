// LlmCompletion: the engine's tokens onto the connection. See llm_completion.h.
#include "bench/llm/serve/llm_completion.h"

#include <algorithm>
#include <ctime>
#include <utility>

namespace chaosbench::bench::llm {
namespace {

// How much of `s` is whole UTF-8 characters: all of it, unless it ends inside a character
// that may still be completed (a lead byte and fewer continuation bytes than it needs).
// Bytes that can never be a character are not held: the writer replaces them.
std::size_t complete_utf8(std::string_view s) {
  for (std::size_t back = 1; back <= std::min<std::size_t>(3, s.size()); ++back) {
    const auto c = static_cast<unsigned char>(s[s.size() - back]);
    if ((c & 0xC0) == 0x80) continue;  // a continuation byte: look further back
    const std::size_t need = (c & 0xE0) == 0xC0 ? 2 : (c & 0xF0) == 0xE0 ? 3 : (c & 0xF8) == 0xF0 ? 4 : 1;
    return need > back ? s.size() - back : s.size();
  }
  return s.size();
}

}  // namespace

LlmCompletion::LlmCompletion(LlmServerShared& shared, const http::ServerExchange& exchange,
                             TokenEngine::Clock::time_point arrival)
    : shared_(shared), exchange_(exchange), arrival_(arrival) {}

LlmCompletion::~LlmCompletion() { release_admission(); }

void LlmCompletion::release_admission() {
  if (admitted_) shared_.release();
  admitted_ = false;
}

bool LlmCompletion::start(OpenAiEndpoint endpoint, const CompletionRequest& request) {
  streaming_ = request.stream;
  include_usage_ = request.include_usage;
  writer_.emplace(endpoint, request.model, shared_.next_id.fetch_add(1), static_cast<std::int64_t>(std::time(nullptr)));
  auto self = shared_from_this();
  const http::ServerExchange exchange = *exchange_;
  TokenSink sink{[self, exchange](std::string_view text) {
                   exchange.post([self, t = std::string(text)] { self->on_token(t); });
                 },
                 [self, exchange](FinishReason reason, Usage usage) {
                   exchange.post([self, reason, usage] { self->on_finish(reason, usage); });
                 }};
  auto generation = shared_.engine->start(request, arrival_, std::move(sink));
  if (!generation) return false;  // the engine's queue is full; it never calls the sink
  generation_ = generation;
  generating_ = true;
  exchange.on_finished([self](bool delivered) { self->on_answer_end(delivered); });
  // The head goes out after start(): a client that sees it finds its request counted.
  if (streaming_) exchange.begin_stream(200, "text/event-stream");
  return true;
}

void LlmCompletion::on_token(const std::string& text) {
  if (!generating_) return;  // a cancelled generation's late token
  shared_.metrics.add_generation_tokens(1);
  last_token_ = TokenEngine::Clock::now();
  if (tokens_sent_++ == 0) {
    first_token_ = last_token_;
    shared_.metrics.observe_ttft(std::chrono::duration<double>(first_token_ - arrival_).count());
  }
  if (!streaming_) {
    text_ += text;
    return;
  }
  stream_text(text);
}

// One SSE event per token, except that a character split over byte tokens waits for its
// last byte; on_finish flushes what is held.
void LlmCompletion::stream_text(std::string_view text) {
  utf8_held_ += text;
  const std::size_t n = complete_utf8(utf8_held_);
  if (n == 0) return;
  std::string event = writer_->token_event(std::string_view(utf8_held_).substr(0, n));
  utf8_held_.erase(0, n);
  exchange_->stream(std::move(event));
}

void LlmCompletion::on_finish(FinishReason reason, const Usage& usage) {
  if (!generating_) return;
  generation_.reset();
  generating_ = false;
  if (tokens_sent_ > 1)
    shared_.metrics.observe_tpot(std::chrono::duration<double>(last_token_ - first_token_).count() /
                                 static_cast<double>(tokens_sent_ - 1));
  if (reason == FinishReason::kError) {
    finish_with_error();
  } else if (!streaming_) {
    exchange_->respond({200, "application/json", writer_->whole(text_, reason, usage)});
  } else {
    std::string events;
    if (!utf8_held_.empty()) events = writer_->token_event(std::exchange(utf8_held_, std::string()));
    events += writer_->finish_event(reason);
    if (include_usage_) events += writer_->usage_event(usage);
    events += ResponseWriter::done_event();
    exchange_->end_stream(std::move(events));
  }
  exchange_.reset();  // all is queued: the connection no longer needs this completion's hold
}

// The engine failed mid-answer: a whole answer becomes a 500 error object; a stream, whose
// 200 head is gone, gets the error object as its last event before [DONE].
void LlmCompletion::finish_with_error() {
  errored_ = true;
  OpenAiError error;
  error.status = 500;
  error.type = "server_error";
  error.code = "engine_failure";
  error.message = "The engine failed while generating this answer (a device error)";
  if (!streaming_) return exchange_->respond({error.status, "application/json", error.json()});
  exchange_->end_stream("data: " + error.json() + "\n\n" + ResponseWriter::done_event());
}

// The answer is written in full (a success unless the engine failed), or its client left
// first: then its generation is cancelled and its KV blocks freed at once.
void LlmCompletion::on_answer_end(bool delivered) {
  if (delivered && !generating_ && !errored_ && admitted_) shared_.metrics.count_success();
  if (!delivered && generating_) {
    if (auto g = generation_.lock()) g->cancel();
    generation_.reset();
    generating_ = false;
    shared_.metrics.count_cancelled();
  }
  release_admission();
  exchange_.reset();
}

}  // namespace chaosbench::bench::llm
