// A minimal incremental HTTP/1.1 response parser for the load generator: status line,
// Content-Length, Connection: close. Chunked bodies are refused (KServe v2 servers send
// Content-Length); a response without Content-Length is taken to have an empty body.
// Bad input is kMalformed, never UB: a head over 64 KiB, a status outside 100..999, a
// Content-Length that is not plain digits, over kMaxBody, or given twice differently.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>

namespace chaosbench::bench::load {

class HttpResponseParser {
 public:
  enum class Outcome { kNeedMore, kComplete, kMalformed };
  // No inference answer is near this; a larger Content-Length is a broken server.
  static constexpr std::uint64_t kMaxBody = 1ull << 30;

  // Looks at the bytes received so far for the current response (always from its first
  // byte). kComplete sets status(), consumed() and keep_alive().
  Outcome parse(std::string_view data);

  int status() const { return status_; }
  std::size_t consumed() const { return consumed_; }  // header + body length
  bool keep_alive() const { return keep_alive_; }

 private:
  bool parse_head(std::string_view head);
  int status_ = 0;
  std::size_t consumed_ = 0;
  std::size_t content_length_ = 0;
  bool keep_alive_ = true;
  bool chunked_ = false;
};

}  // namespace chaosbench::bench::load
