#include "bench/llm/load/llm_exchange.h"

namespace chaosbench::bench::llm {
namespace {

StreamFailure stream_failure(openloop::OpenLoopExchange::Failure failure) {
  using F = openloop::OpenLoopExchange::Failure;
  switch (failure) {
    case F::kConnect: return StreamFailure::kConnect;
    case F::kTimeout: return StreamFailure::kTimeout;
    case F::kTruncated: return StreamFailure::kTruncated;
    case F::kMalformed: return StreamFailure::kMalformed;
    case F::kCancelled: return StreamFailure::kCancelled;
  }
  return StreamFailure::kMalformed;
}

}  // namespace

LlmExchange::LlmExchange(Clock::time_point scheduled, LlmRequest request, const std::vector<LlmRequestShape>& shapes,
                         LlmLoadRecorder& recorder)
    : OpenLoopExchange(scheduled), request_(std::move(request)), shapes_(shapes), recorder_(recorder) {
  reader_.emplace(shapes_.front().api, shapes_.front().stream, scheduled, request_.input_tokens);
}

std::string_view LlmExchange::request(std::size_t endpoint) {
  const auto& shape = shapes_[endpoint];
  reader_.emplace(shape.api, shape.stream, scheduled(), request_.input_tokens);
  bytes_ = llm_http_request(shape, request_);
  return bytes_;
}

bool LlmExchange::on_head(const http::HttpResponseReader& response, Clock::time_point at) {
  return reader_->on_head(response.status(), at);
}

bool LlmExchange::on_complete(const http::HttpResponseReader& response, bool can_fail_over, Clock::time_point at) {
  (void)response, (void)can_fail_over;
  reader_->on_complete(at);
  return false;
}

bool LlmExchange::on_failure(Failure failure, std::string_view detail, bool can_fail_over, Clock::time_point at) {
  if (failure == Failure::kConnect && can_fail_over) return true;  // another endpoint may take it
  reader_->fail(at, stream_failure(failure), std::string(detail));
  return false;
}

void LlmExchange::on_end(Clock::time_point at) { recorder_.finished(reader_->timing(), at); }

}  // namespace chaosbench::bench::llm
