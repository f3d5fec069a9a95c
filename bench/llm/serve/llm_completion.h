// One admitted completion of LlmHttpServer being answered: its generation on the engine,
// each token turned into an SSE event (streaming: one event per token, the stream's head
// sent once the engine took the request) or into the answer's text (whole), then the
// finish and usage events and [DONE], or the error object when the engine failed. A client
// that leaves first cancels the generation at once. It holds one of max_running from its
// admission until its answer is written in full or abandoned, and counts the success.
// Threads: the engine's sink calls are posted onto the connection's strand
// (http::ServerExchange::post); everything else runs there too. The engine's sink and the
// connection's end callback hold it; it holds its connection only until its last bytes
// are queued.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "bench/http/server_exchange.h"
#include "bench/llm/openai_response.h"
#include "bench/llm/serve/llm_server_shared.h"

namespace chaosbench::bench::llm {

class LlmCompletion : public std::enable_shared_from_this<LlmCompletion> {
 public:
  // `shared` has admitted it (try_admit); the completion releases that admission.
  LlmCompletion(LlmServerShared& shared, const http::ServerExchange& exchange, TokenEngine::Clock::time_point arrival);
  ~LlmCompletion();
  LlmCompletion(const LlmCompletion&) = delete;
  LlmCompletion& operator=(const LlmCompletion&) = delete;

  // Starts generating `request` for `endpoint` (on the strand); false when the engine
  // refused it (its queue is full: the caller answers 429).
  bool start(OpenAiEndpoint endpoint, const CompletionRequest& request);

 private:
  void on_token(const std::string& text);
  void stream_text(std::string_view text);
  void on_finish(FinishReason reason, const Usage& usage);
  void finish_with_error();
  void on_answer_end(bool delivered);
  void release_admission();

  LlmServerShared& shared_;
  std::optional<http::ServerExchange> exchange_;  // until the last bytes are queued
  bool admitted_ = true;
  bool streaming_ = false;
  bool include_usage_ = false;
  std::optional<ResponseWriter> writer_;
  // Weak: the generation's pending work holds its sink, which holds this completion.
  std::weak_ptr<Generation> generation_;
  bool generating_ = false;  // started, neither finished nor cancelled
  TokenEngine::Clock::time_point arrival_, first_token_, last_token_;  // for the latency histograms
  std::uint64_t tokens_sent_ = 0;
  std::string text_;  // not streaming: the answer so far
  // Streaming: bytes of a UTF-8 character whose rest is still to come (a byte-level token
  // is one byte), held so each event carries whole characters, as an incremental
  // detokenizer does; a whole answer and a stream then read the same.
  std::string utf8_held_;
  bool errored_ = false;  // the engine failed this answer (not a success)
};

}  // namespace chaosbench::bench::llm
