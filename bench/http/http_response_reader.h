// The HTTP client core's incremental HTTP/1.1 response parser, under both load
// generators (through http_client_connection.h): it decodes
// `Transfer-Encoding: chunked`, Content-Length and read-until-close bodies and
// hands the body back piece by piece as bytes arrive, never buffering it whole,
// so an LLM client can time each streamed event and a KServe client can wait for
// the end. Only the head (and a chunked body's trailers) is copied, and both are
// bounded, as is the body's length (Limits).
//
// Framing decisions, against a server we do not trust (RFC 9112):
// - Head and trailer lines end in CRLF or a bare LF (§2.2 lets a recipient accept LF);
//   a bare CR anywhere in them, obs-fold continuation lines, a space before a header's
//   colon, or a non-token header name are errors.
// - Chunk framing is strict: the size line and the end of each chunk's data are CRLF,
//   never a bare LF, since lenient chunk framing is where desynchronisation bugs live.
//   The size is hex digits only (no sign, no "0x"), at most kMaxChunkLine bytes with its
//   extensions (skipped, unvalidated but for control bytes); a size past the body limit
//   is an error before its data arrives, so no arithmetic can overflow.
// - Transfer-Encoding other than exactly "chunked" is refused; with it, Content-Length is
//   ignored and the connection is not reused (§6.3). Content-Length is digits only; two
//   different values are an error, one past the body limit too. 1xx interim heads (103
//   Early Hints) are skipped; 101 is an error. 204 and 304 have no body.
// - The parser assumes the request was not HEAD.
// Not thread-safe: one parser per connection, used by the thread that reads it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace chaosbench::bench::http {

class HttpResponseReader {
 public:
  // Bounds against a server we do not trust.
  struct Limits {
    std::size_t max_head = 64 * 1024;       // status line + headers, and separately the trailers
    std::uint64_t max_body = 256ull << 20;  // decoded body bytes; at most kMaxBodyLimit
    static constexpr std::uint64_t kMaxBodyLimit = 1ull << 60;
  };
  enum class State { kHead, kBody, kComplete, kError };
  enum class Error {
    kNone,
    kHeadTooLarge,
    kBadStatusLine,
    kBadHeader,
    kBadContentLength,
    kUnsupportedTransferEncoding,
    kUnsupportedStatus,  // 101: no HTTP answer follows
    kBadChunkSize,
    kChunkLineTooLong,
    kBadChunkFraming,  // missing CRLF after a size line or after chunk data
    kBodyTooLarge,
    kTrailersTooLarge,
    kBadTrailer,
    kTruncated,  // the connection ended inside the head or a framed body
  };
  // Chunk size line with extensions, without its CRLF. Real servers send
  // "1a2b".
  static constexpr std::size_t kMaxChunkLine = 256;
  static constexpr int kMaxInterimHeads = 8;
  // A head buffer up to this size is kept for the next response on the connection.
  static constexpr std::size_t kKeptHeadCapacity = 4096;

  // One step's result. `body` views bytes of the input given to step(): valid
  // as long as that input is, and only until the caller drops it.
  struct Step {
    std::size_t consumed = 0;
    std::string_view body;
  };

  HttpResponseReader();
  explicit HttpResponseReader(Limits limits);

  // Reads `bytes`, the next bytes of the connection, until the head completes,
  // one body piece is found, the response completes, it fails, or the bytes run
  // out; so a caller sees each of those as it happens. While state() is kHead
  // or kBody and `bytes` is not empty, consumed > 0. In kComplete and kError it
  // consumes nothing: bytes after a complete response belong to the next one
  // (call reset() first). No allocation but the head's and trailers' buffers.
  Step step(std::string_view bytes);

  // Loops step() over all of `bytes`, calling on_body(std::string_view) for
  // each body piece. Returns how many bytes were used (fewer than given once
  // complete or failed).
  template <class OnBody>
  std::size_t feed(std::string_view bytes, OnBody &&on_body) {
    std::size_t used = 0;
    while (used < bytes.size() && (state_ == State::kHead || state_ == State::kBody)) {
      const Step s = step(bytes.substr(used));
      used += s.consumed;
      if (!s.body.empty()) on_body(s.body);
    }
    return used;
  }

  // The connection reached end of file: completes a read-until-close body,
  // otherwise a response in progress fails with kTruncated. Returns the state.
  State finish_at_eof();
  // Forgets the response (keeping the limits) to parse the next one on the
  // connection.
  void reset();

  State state() const { return state_; }
  Error error() const { return error_; }
  bool head_done() const { return state_ == State::kBody || state_ == State::kComplete; }
  int status() const { return status_; }
  // The media type's value as sent (e.g. "text/event-stream; charset=utf-8"),
  // empty if none.
  const std::string &content_type() const { return content_type_; }
  bool chunked() const { return framing_ == Framing::kChunked; }
  // Whether the connection may carry another request after this response.
  bool keep_alive() const { return keep_alive_; }
  std::uint64_t body_bytes() const { return body_bytes_; }

 private:
  enum class Framing { kNone, kLength, kChunked, kUntilClose };
  enum class Chunk { kSize, kExtension, kSizeLf, kData, kDataCr, kDataLf, kTrailers };

  std::size_t step_head(std::string_view bytes);
  bool parse_head(std::string_view head);
  bool parse_status_line(std::string_view line);
  bool parse_header(std::string_view line, bool &length_seen, std::uint64_t &length);
  void start_body(bool length_seen, std::uint64_t length);
  Step step_chunked(std::string_view bytes);
  std::size_t step_chunk_line(std::string_view bytes);
  std::size_t step_trailers(std::string_view bytes);
  Step take_data(std::string_view bytes, std::uint64_t remaining);
  void fail(Error e);
  std::size_t fail_at(Error e, std::size_t consumed) {  // fails, and says how far it read
    fail(e);
    return consumed;
  }

  Limits limits_;
  // The response's state: reset() sets each back, so a member added here is added there.
  State state_ = State::kHead;
  Error error_ = Error::kNone;
  std::string head_;
  std::size_t line_start_ = 0;  // in head_, of the line being read
  int interim_heads_ = 0;
  int status_ = 0;
  bool http10_ = false;
  bool keep_alive_ = true;
  std::string content_type_;
  Framing framing_ = Framing::kNone;
  Chunk chunk_ = Chunk::kSize;
  std::uint64_t remaining_ = 0;  // of the Content-Length body or of the current chunk
  std::size_t chunk_line_ = 0;   // bytes of the size line read so far
  bool size_digits_ = false;     // the size line has at least one hex digit
  bool size_done_ = false;       // a space or ';' ended the digits
  std::uint64_t body_bytes_ = 0;
};

const char *to_string(HttpResponseReader::Error error);

}  // namespace chaosbench::bench::http
