// One LLM request through the open-loop engine (bench/openloop/open_loop_engine.h): the
// OpenAI request for the endpoint it goes to (llm_request_builder.h), its answer read by
// an LlmStreamReader (SSE or one JSON body, timed as each read returned), and its timing
// handed to the recorder when it ends. Only a connect failure (no answer byte) is worth
// another endpoint; every other outcome is the request's result. Each attempt starts a
// fresh reader, so a failed-over request is timed from its scheduled time with the send
// of the attempt that carried it.
// Threads: the engine's loop thread only.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "bench/llm/load/llm_load_recorder.h"
#include "bench/llm/load/llm_request_builder.h"
#include "bench/llm/load/token_dataset.h"
#include "bench/llm/stream/llm_stream_reader.h"
#include "bench/openloop/open_loop_exchange.h"

namespace chaosbench::bench::llm {

class LlmExchange final : public openloop::OpenLoopExchange {
 public:
  // `shapes`: one per endpoint (its Host header), outliving the exchange, as `recorder` does.
  LlmExchange(Clock::time_point scheduled, LlmRequest request, const std::vector<LlmRequestShape>& shapes,
              LlmLoadRecorder& recorder);

  std::string_view request(std::size_t endpoint) override;
  void on_sent(Clock::time_point at) override { reader_->sent(at); }
  void on_first_byte(Clock::time_point at) override { reader_->first_byte(at); }
  bool on_head(const http::HttpResponseReader& response, Clock::time_point at) override;
  bool on_body(std::string_view piece, Clock::time_point at) override { return reader_->on_body(piece, at); }
  bool on_complete(const http::HttpResponseReader& response, bool can_fail_over, Clock::time_point at) override;
  bool on_failure(Failure failure, std::string_view detail, bool can_fail_over, Clock::time_point at) override;
  void on_end(Clock::time_point at) override;

 private:
  LlmRequest request_;
  const std::vector<LlmRequestShape>& shapes_;
  LlmLoadRecorder& recorder_;
  std::string bytes_;  // the current attempt's
  std::optional<LlmStreamReader> reader_;
};

}  // namespace chaosbench::bench::llm
