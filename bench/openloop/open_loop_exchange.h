// One request as the open-loop engine (open_loop_engine.h) carries it, seen from the load
// generator that made it: the bytes to send, what to do with the answer as it arrives (an
// http::HttpResponseSink: head, body pieces, each timed as its read returned), and the
// decisions only the generator's protocol can take (is a 503 worth another endpoint? is
// a connect failure?). The engine owns it from submit() to on_end().
//
// Every attempt ends in exactly one of: on_complete (the answer ended well), on_failure
// (no answer, a cut or malformed one, past the deadline, the run stopped), or the sink
// ending the exchange itself (its on_head or on_body returned false: the exchange has
// then decided its outcome). Each of the first two may ask for the next endpoint; when
// the engine does not move the request, or it is over, on_end is the last call.
// Latency is the generator's to measure: from scheduled(), never from the actual send
// (no coordinated omission). Threads: the engine's loop thread only.
#pragma once

#include <chrono>
#include <cstddef>
#include <string_view>

#include "bench/http/http_response_reader.h"
#include "bench/http/http_response_sink.h"

namespace chaosbench::bench::openloop {

class OpenLoopExchange : public http::HttpResponseSink {
 public:
  enum class Failure {
    kConnect,    // the connect failed, or the server closed before any byte of the answer
    kTimeout,    // no end by the deadline (the run's drain limit included)
    kTruncated,  // the connection ended inside the answer
    kMalformed,  // the answer broke HTTP framing or the reader's limits
    kCancelled,  // the run was stopped
  };

  // `scheduled`: when the request was due (its arrival; in a closed loop, when its slot freed).
  explicit OpenLoopExchange(Clock::time_point scheduled) : scheduled_(scheduled) {}
  Clock::time_point scheduled() const { return scheduled_; }

  // The bytes for this attempt at endpoint `endpoint` (an index into the engine's
  // endpoints); they must stay valid until the attempt ends.
  virtual std::string_view request(std::size_t endpoint) = 0;
  // The attempt's answer ended well; `response` holds its head. Return true to send the
  // request to the next endpoint instead (honoured only when `can_fail_over`).
  virtual bool on_complete(const http::HttpResponseReader& response, bool can_fail_over, Clock::time_point at) = 0;
  // The attempt failed (`detail` says how, for messages). Return true to send the request
  // to the next endpoint (honoured only when `can_fail_over`: endpoints and time are left,
  // and the run goes on).
  virtual bool on_failure(Failure failure, std::string_view detail, bool can_fail_over, Clock::time_point at) = 0;
  // The request leaves the engine at `at`; no call follows.
  virtual void on_end(Clock::time_point at) = 0;

 private:
  Clock::time_point scheduled_;
};

}  // namespace chaosbench::bench::openloop
