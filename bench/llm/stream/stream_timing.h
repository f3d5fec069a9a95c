// What one streamed LLM request measured: plain values computed from its timeline
// (stream_timeline.h), no live objects. The load generator's recorders and the SLO judge
// (slo.h) read only this.
//
// Definitions follow vLLM's benchmark_serving (`calculate_metrics` and the OpenAI stream
// readers in benchmarks/backend_request_func.py) and NVIDIA GenAI-Perf/AIPerf's metrics
// reference, with one deliberate difference: every latency starts at the request's
// *scheduled* send time, not the moment the client got round to sending it, so a client
// or server that stalls cannot hide its queueing (coordinated omission; wrk2).
//   TTFT  = arrival of the first chunk that carries at least one token − scheduled time.
//           Chunks with no token (the chat API's role-only first delta, the usage-only
//           last chunk) do not count: AIPerf ignores empty responses for TTFT.
//   ITL   = every gap between consecutive token-carrying chunks (vLLM's `itl` list), so a
//           stream of n such chunks has n − 1 gaps, however many tokens each chunk holds.
//           GenAI-Perf calls the per-request average "inter-token latency"; here that is
//           TPOT.
//   e2e   = arrival of the last token-carrying chunk − scheduled time (vLLM's `latency`,
//           taken at its most recent content chunk); a stream with no token ends at its
//           finish time instead; a failed request's e2e runs to the moment it failed.
//   TPOT  = (e2e − TTFT) / (output tokens − 1), only for output tokens > 1; for 0 or 1
//           token it is absent (vLLM counts it 0 for goodput; slo.h does the same).
//   output tokens = the server's usage.completion_tokens when it sent one, else the sum
//           of tokens counted in the chunks; input tokens = usage.prompt_tokens when
//           present, else the prompt length the request was built with.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace chaosbench::bench::llm {

// Why a streamed request failed. A failure is a result, never an exception.
enum class StreamFailure {
  kNone,        // completed: the stream ended as the protocol says ([DONE], or a whole body)
  kConnect,     // refused, reset or unreachable before any response byte
  kHttpStatus,  // the server answered with a non-2xx status
  kTimeout,     // the request's deadline passed
  kMalformed,   // the response or an SSE event could not be parsed
  kTruncated,   // the connection closed before the stream's end
  kCancelled,   // the client gave up (run stopped)
  kRejected,    // never sent: the client's own bound on requests in flight was reached
};
std::string_view to_string(StreamFailure failure);

struct StreamTiming {
  using Nanos = std::chrono::nanoseconds;

  StreamFailure failure = StreamFailure::kNone;
  std::string failure_detail;      // for example "HTTP 503" or "bad JSON in event 3"
  std::optional<Nanos> send_lag;   // actual send − scheduled (the client's own delay)
  std::optional<Nanos> first_byte; // first response byte − scheduled
  std::optional<Nanos> ttft;       // absent when no token arrived
  std::optional<Nanos> tpot;       // absent for output tokens <= 1 or without a TTFT
  Nanos e2e{0};
  std::vector<Nanos> itl;          // one gap per pair of consecutive token chunks
  std::int64_t input_tokens = 0;
  std::int64_t output_tokens = 0;
  std::int64_t counted_tokens = 0;   // tokens counted in chunks, whatever usage said
  bool tokens_from_usage = false;    // output_tokens came from the server's usage field

  bool ok() const { return failure == StreamFailure::kNone; }
  // Milliseconds as double, the unit the catalogue's infer/* rows use.
  static double ms(Nanos d) { return std::chrono::duration<double, std::milli>(d).count(); }
  // Output tokens per second of this request's e2e; 0 when e2e is 0.
  double output_tokens_per_s() const;
};

}  // namespace chaosbench::bench::llm
