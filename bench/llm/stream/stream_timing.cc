#include "bench/llm/stream/stream_timing.h"

namespace chaosbench::bench::llm {

std::string_view to_string(StreamFailure failure) {
  switch (failure) {
    case StreamFailure::kNone: return "none";
    case StreamFailure::kConnect: return "connect";
    case StreamFailure::kHttpStatus: return "http_status";
    case StreamFailure::kTimeout: return "timeout";
    case StreamFailure::kMalformed: return "malformed";
    case StreamFailure::kTruncated: return "truncated";
    case StreamFailure::kCancelled: return "cancelled";
    case StreamFailure::kRejected: return "rejected";
  }
  return "unknown";
}

double StreamTiming::output_tokens_per_s() const {
  const double seconds = std::chrono::duration<double>(e2e).count();
  return seconds > 0 ? static_cast<double>(output_tokens) / seconds : 0.0;
}

}  // namespace chaosbench::bench::llm
