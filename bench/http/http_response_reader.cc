#include "bench/http/http_response_reader.h"

#include <strings.h>

#include <algorithm>
#include <array>

namespace chaosbench::bench::http {
namespace {

// RFC 9110 §5.6.2 token characters, as a table: every header name of every answer on a
// kept-alive connection is checked byte by byte.
constexpr std::array<bool, 256> kTokenChars = [] {
  std::array<bool, 256> table{};
  for (int c = '0'; c <= '9'; ++c) table[static_cast<std::size_t>(c)] = true;
  for (int c = 'a'; c <= 'z'; ++c) table[static_cast<std::size_t>(c)] = true;
  for (int c = 'A'; c <= 'Z'; ++c) table[static_cast<std::size_t>(c)] = true;
  for (const char c : std::string_view("!#$%&'*+-.^_`|~")) table[static_cast<unsigned char>(c)] = true;
  return table;
}();

bool is_token_char(char c) { return kTokenChars[static_cast<unsigned char>(c)]; }

int hex_digit_value(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

std::string_view trim_ows(std::string_view v) {
  while (!v.empty() && (v.front() == ' ' || v.front() == '\t')) v.remove_prefix(1);
  while (!v.empty() && (v.back() == ' ' || v.back() == '\t')) v.remove_suffix(1);
  return v;
}

bool same_token(std::string_view a, std::string_view b) {
  return a.size() == b.size() && strncasecmp(a.data(), b.data(), a.size()) == 0;
}

// A field line (without its line end) split into name and trimmed value; false
// when it is not one: empty or non-token name, space before the colon,
// obs-fold, CR or NUL.
bool split_field_line(std::string_view line, std::string_view &name, std::string_view &value) {
  const auto colon = line.find(':');
  if (colon == 0 || colon == std::string_view::npos) return false;
  name = line.substr(0, colon);
  if (!std::all_of(name.begin(), name.end(), is_token_char)) return false;
  value = line.substr(colon + 1);
  if (value.find('\r') != std::string_view::npos || value.find('\0') != std::string_view::npos) return false;
  value = trim_ows(value);
  return true;
}

// Where the head at the front of `bytes` ends (just past its blank line: CRLF or a bare
// LF), or npos when the blank line is not in `bytes`.
std::size_t end_of_head(std::string_view bytes) {
  std::size_t at = 0;
  for (;;) {
    const auto lf = bytes.find('\n', at);
    if (lf == std::string_view::npos) return lf;
    const auto length = lf - at;
    at = lf + 1;
    if (length == 0 || (length == 1 && bytes[lf - 1] == '\r')) return at;
  }
}

// Lines of a head or trailer section: each without its LF and the CR before it.
template <class OnLine>
bool for_each_field_line(std::string_view section, OnLine &&on_line) {
  while (!section.empty()) {
    const auto lf = section.find('\n');
    auto line = section.substr(0, lf);
    section.remove_prefix(lf == std::string_view::npos ? section.size() : lf + 1);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    if (line.empty()) continue;  // the section's closing blank line
    if (!on_line(line)) return false;
  }
  return true;
}

}  // namespace

HttpResponseReader::HttpResponseReader() : HttpResponseReader(Limits{}) {}

HttpResponseReader::HttpResponseReader(Limits limits) : limits_(limits) {
  limits_.max_body = std::min(limits_.max_body, Limits::kMaxBodyLimit);
}

// Member by member, as the class declares them (a new member is reset here too), keeping
// the buffers' capacity: a kept-alive connection resets once per request.
void HttpResponseReader::reset() {
  state_ = State::kHead;
  error_ = Error::kNone;
  head_.clear();
  line_start_ = 0;
  interim_heads_ = 0;
  status_ = 0;
  http10_ = false;
  keep_alive_ = true;
  content_type_.clear();
  framing_ = Framing::kNone;
  chunk_ = Chunk::kSize;
  remaining_ = 0;
  chunk_line_ = 0;
  size_digits_ = false;
  size_done_ = false;
  body_bytes_ = 0;
}

void HttpResponseReader::fail(Error e) {
  state_ = State::kError;
  error_ = e;
  keep_alive_ = false;
}

HttpResponseReader::Step HttpResponseReader::step(std::string_view bytes) {
  if (bytes.empty()) return {};
  if (state_ == State::kHead) return {step_head(bytes), {}};
  if (state_ != State::kBody) return {};
  switch (framing_) {
    case Framing::kChunked:
      return step_chunked(bytes);
    case Framing::kLength:
      return take_data(bytes, remaining_);
    case Framing::kUntilClose:
      if (bytes.size() > limits_.max_body - body_bytes_) {
        fail(Error::kBodyTooLarge);
        return {};
      }
      return take_data(bytes, bytes.size());
    case Framing::kNone:
      break;
  }
  return {};
}

HttpResponseReader::Step HttpResponseReader::take_data(std::string_view bytes, std::uint64_t remaining) {
  const auto n = static_cast<std::size_t>(std::min<std::uint64_t>(bytes.size(), remaining));
  body_bytes_ += n;
  if (framing_ != Framing::kUntilClose) remaining_ -= n;
  if (framing_ == Framing::kLength && remaining_ == 0) state_ = State::kComplete;
  if (framing_ == Framing::kChunked && remaining_ == 0) chunk_ = Chunk::kDataCr;
  return {n, bytes.substr(0, n)};
}

// A head that arrives whole in one read (the usual case: every request on a kept-alive
// connection parses one) is parsed where it lies, without a copy. Otherwise head bytes are
// copied a line at a time (memchr for its end) until a blank line, and the head parsed
// there. Stops right after it (an interim 1xx head: after it, or after the real one).
std::size_t HttpResponseReader::step_head(std::string_view bytes) {
  if (head_.empty()) {
    const auto end = end_of_head(bytes.substr(0, limits_.max_head));
    if (end != std::string_view::npos) {
      parse_head(bytes.substr(0, end));
      return end;
    }
  }
  std::size_t i = 0;
  while (i < bytes.size()) {
    if (head_.size() >= limits_.max_head) {
      fail(Error::kHeadTooLarge);
      return i;
    }
    const auto rest = bytes.substr(i, limits_.max_head - head_.size());
    const auto lf = rest.find('\n');
    const std::size_t take = lf == std::string_view::npos ? rest.size() : lf + 1;
    head_.append(rest.data(), take);
    i += take;
    if (lf == std::string_view::npos) continue;
    const auto line_length = head_.size() - 1 - line_start_;
    const bool blank = line_length == 0 || (line_length == 1 && head_[line_start_] == '\r');
    line_start_ = head_.size();
    if (!blank) continue;
    if (!parse_head(head_)) return i;
    if (state_ == State::kHead) continue;  // an interim 1xx head: the real one follows
    return i;
  }
  return i;
}

// `head`: the status line and the fields with the blank line that ends them (viewing the
// input bytes, or head_, which this clears once done with the view).
bool HttpResponseReader::parse_head(std::string_view head) {
  const auto first_lf = head.find('\n');
  auto status_line = head.substr(0, first_lf);
  if (!status_line.empty() && status_line.back() == '\r') status_line.remove_suffix(1);
  if (!parse_status_line(status_line)) return false;
  if (status_ >= 100 && status_ < 200 && status_ != 101) {
    if (++interim_heads_ > kMaxInterimHeads) {
      fail(Error::kUnsupportedStatus);
      return false;
    }
    head_.clear();
    line_start_ = 0;
    return true;
  }
  if (status_ == 101) {
    fail(Error::kUnsupportedStatus);
    return false;
  }
  keep_alive_ = !http10_;
  bool length_seen = false;
  std::uint64_t length = 0;
  const bool ok = for_each_field_line(head.substr(first_lf + 1),
                                [&](std::string_view line) { return parse_header(line, length_seen, length); });
  if (!ok) return false;
  start_body(length_seen, length);
  return true;
}

// "HTTP/1.1 200 OK"; the reason phrase may be empty or absent.
bool HttpResponseReader::parse_status_line(std::string_view line) {
  const bool ok = line.size() >= 12 && (line.substr(0, 9) == "HTTP/1.1 " || line.substr(0, 9) == "HTTP/1.0 ") &&
                  std::all_of(line.begin() + 9, line.begin() + 12, [](char c) { return c >= '0' && c <= '9'; }) &&
                  (line.size() == 12 || line[12] == ' ') && line.find('\r') == std::string_view::npos && line[9] != '0';
  if (!ok) {
    fail(Error::kBadStatusLine);
    return false;
  }
  http10_ = line[7] == '0';
  status_ = (line[9] - '0') * 100 + (line[10] - '0') * 10 + (line[11] - '0');
  return true;
}

bool HttpResponseReader::parse_header(std::string_view line, bool &length_seen, std::uint64_t &length) {
  std::string_view name, value;
  if (!split_field_line(line, name, value)) {
    fail(Error::kBadHeader);
    return false;
  }
  if (same_token(name, "content-length")) {
    // Digits only (no sign, no list); 19 digits cannot overflow 64 bits.
    const bool digits = !value.empty() && value.size() <= 19 &&
                        std::all_of(value.begin(), value.end(), [](char c) { return c >= '0' && c <= '9'; });
    std::uint64_t v = 0;
    for (const char c : digits ? value : std::string_view()) v = v * 10 + static_cast<std::uint64_t>(c - '0');
    if (!digits || (length_seen && v != length)) {
      fail(Error::kBadContentLength);
      return false;
    }
    if (v > limits_.max_body) {
      fail(Error::kBodyTooLarge);
      return false;
    }
    length_seen = true;
    length = v;
  } else if (same_token(name, "transfer-encoding")) {
    if (framing_ == Framing::kChunked || !same_token(value, "chunked")) {
      fail(Error::kUnsupportedTransferEncoding);
      return false;
    }
    framing_ = Framing::kChunked;
  } else if (same_token(name, "content-type")) {
    content_type_.assign(value.data(), value.size());
  } else if (same_token(name, "connection")) {
    std::size_t pos = 0;
    while (pos <= value.size()) {
      const auto comma = std::min(value.find(',', pos), value.size());
      const auto token = trim_ows(value.substr(pos, comma - pos));
      if (same_token(token, "close")) keep_alive_ = false;
      if (same_token(token, "keep-alive") && http10_) keep_alive_ = true;
      pos = comma + 1;
    }
  }
  return true;
}

void HttpResponseReader::start_body(bool length_seen, std::uint64_t length) {
  state_ = State::kBody;
  if (status_ == 204 || status_ == 304) {
    framing_ = Framing::kNone;
    state_ = State::kComplete;
  } else if (framing_ == Framing::kChunked) {
    if (length_seen) keep_alive_ = false;  // RFC 9112 §6.3: close after such a message
    chunk_ = Chunk::kSize;
  } else if (length_seen) {
    framing_ = Framing::kLength;
    remaining_ = length;
    if (length == 0) state_ = State::kComplete;
  } else {
    framing_ = Framing::kUntilClose;
    keep_alive_ = false;
  }
  head_.clear();
  if (head_.capacity() > kKeptHeadCapacity) head_.shrink_to_fit();  // a huge head's buffer is not kept
  line_start_ = 0;
}

HttpResponseReader::Step HttpResponseReader::step_chunked(std::string_view bytes) {
  std::size_t i = 0;
  while (i < bytes.size() && state_ == State::kBody) {
    switch (chunk_) {
      case Chunk::kSize:
      case Chunk::kExtension:
      case Chunk::kSizeLf:
        i += step_chunk_line(bytes.substr(i));
        break;
      case Chunk::kData: {
        const Step piece = take_data(bytes.substr(i), remaining_);
        return {i + piece.consumed, piece.body};
      }
      case Chunk::kDataCr:
      case Chunk::kDataLf:
        if (bytes[i] != (chunk_ == Chunk::kDataCr ? '\r' : '\n')) {
          fail(Error::kBadChunkFraming);
          return {i, {}};
        }
        ++i;
        chunk_ = chunk_ == Chunk::kDataCr ? Chunk::kDataLf : Chunk::kSize;
        break;
      case Chunk::kTrailers:
        i += step_trailers(bytes.substr(i));
        break;
    }
  }
  return {i, {}};
}

// The size line: HEX [BWS] [";" extensions] CRLF. Stops after its LF.
std::size_t HttpResponseReader::step_chunk_line(std::string_view bytes) {
  std::size_t i = 0;
  while (i < bytes.size()) {
    const char c = bytes[i++];
    if (chunk_ == Chunk::kSizeLf) {
      if (c != '\n') return fail_at(Error::kBadChunkFraming, i);
      chunk_ = remaining_ == 0 ? Chunk::kTrailers : Chunk::kData;
      chunk_line_ = 0;
      size_digits_ = size_done_ = false;
      return i;
    }
    if (c == '\r') {
      if (!size_digits_) return fail_at(Error::kBadChunkSize, i);
      chunk_ = Chunk::kSizeLf;
      continue;
    }
    if (c == '\n') return fail_at(Error::kBadChunkFraming, i);  // a bare LF
    if (++chunk_line_ > kMaxChunkLine) return fail_at(Error::kChunkLineTooLong, i);
    if (chunk_ == Chunk::kExtension) {
      if ((static_cast<unsigned char>(c) < 0x20 && c != '\t') || c == 0x7f) return fail_at(Error::kBadChunkSize, i);
      continue;
    }
    if (const int digit = hex_digit_value(c); digit >= 0 && !size_done_) {
      // remaining_ <= max_body <= 2^60 here, so this cannot overflow.
      remaining_ = remaining_ * 16 + static_cast<std::uint64_t>(digit);
      if (remaining_ > limits_.max_body - body_bytes_) return fail_at(Error::kBodyTooLarge, i);
      size_digits_ = true;
    } else if ((c == ' ' || c == '\t') && size_digits_) {
      size_done_ = true;
    } else if (c == ';' && size_digits_) {
      chunk_ = Chunk::kExtension;
    } else {
      return fail_at(Error::kBadChunkSize, i);
    }
  }
  return i;
}

// Trailer fields after the last chunk, up to a blank line; read, checked and
// dropped.
std::size_t HttpResponseReader::step_trailers(std::string_view bytes) {
  std::size_t i = 0;
  while (i < bytes.size()) {
    if (head_.size() >= limits_.max_head) return fail_at(Error::kTrailersTooLarge, i);
    const char c = bytes[i++];
    head_.push_back(c);
    if (c != '\n') continue;
    auto line = std::string_view(head_).substr(line_start_, head_.size() - 1 - line_start_);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    line_start_ = head_.size();
    if (line.empty()) {
      state_ = State::kComplete;
      return i;
    }
    std::string_view name, value;
    if (!split_field_line(line, name, value)) return fail_at(Error::kBadTrailer, i);
  }
  return i;
}

HttpResponseReader::State HttpResponseReader::finish_at_eof() {
  if (state_ == State::kBody && framing_ == Framing::kUntilClose) {
    state_ = State::kComplete;
  } else if (state_ == State::kHead || state_ == State::kBody) {
    fail(Error::kTruncated);
  }
  return state_;
}

const char *to_string(HttpResponseReader::Error error) {
  using E = HttpResponseReader::Error;
  switch (error) {
    case E::kNone:
      return "none";
    case E::kHeadTooLarge:
      return "head too large";
    case E::kBadStatusLine:
      return "bad status line";
    case E::kBadHeader:
      return "bad header line";
    case E::kBadContentLength:
      return "bad Content-Length";
    case E::kUnsupportedTransferEncoding:
      return "unsupported Transfer-Encoding";
    case E::kUnsupportedStatus:
      return "unsupported status";
    case E::kBadChunkSize:
      return "bad chunk size";
    case E::kChunkLineTooLong:
      return "chunk size line too long";
    case E::kBadChunkFraming:
      return "bad chunk framing";
    case E::kBodyTooLarge:
      return "body too large";
    case E::kTrailersTooLarge:
      return "trailers too large";
    case E::kBadTrailer:
      return "bad trailer line";
    case E::kTruncated:
      return "truncated";
  }
  return "unknown";
}

}  // namespace chaosbench::bench::http
