// One HTTP/1.1 request parsed from bytes as they arrive (Boost.Beast's request parser,
// fed by ServerSession), within a header limit and a body limit. The one place the
// servers compile Beast: it stays in the .cc, so its templates are instantiated once for
// the KServe server, the LLM server and the metrics listener together.
// Threads: one owner.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "bench/http/server_request.h"

namespace chaosbench::bench::http {

class BeastRequestParser {
 public:
  enum class Step {
    kNeedMore,  // every byte given was taken: more are needed
    kHeader,    // the header is complete (once per request): its body may be judged now
    kDone,      // the request is complete: release() it
    kFailed,    // not a request within the limits: failure() says why
  };
  // Why a request could not be read, as the answer the client gets.
  struct Failure {
    int status = 400;     // 400 malformed, 413 body over the limit, 431 header over the limit
    std::string message;  // says what was wrong without quoting the input
  };

  BeastRequestParser();
  ~BeastRequestParser();
  BeastRequestParser(const BeastRequestParser&) = delete;
  BeastRequestParser& operator=(const BeastRequestParser&) = delete;

  // Starts a new request.
  void reset(std::size_t header_limit, std::uint64_t body_limit);
  // Parses from the front of `bytes`, adding how many it took to `consumed`. The header is
  // taken only once it is whole (until then nothing is consumed, so pass the same bytes
  // again with more after them); then stops at kHeader once, then takes body bytes.
  Step put(std::string_view bytes, std::size_t& consumed);
  // The connection ended: kFailed ("partial message") when a request had begun.
  Step put_eof();
  bool got_some() const;  // some of a request was parsed
  // After kHeader: the declared Content-Length, and whether the body is chunked.
  std::optional<std::uint64_t> content_length() const;
  bool chunked() const;
  const Failure& failure() const { return failure_; }
  // After kDone: the request (the parser is empty until reset()).
  ServerRequest release();

 private:
  Step fail(int status, std::string message);

  struct Impl;
  std::unique_ptr<Impl> impl_;
  Failure failure_;
  std::size_t header_limit_ = 0;
  std::uint64_t body_limit_ = 0;
  bool header_seen_ = false;
};

}  // namespace chaosbench::bench::http
