#include "bench/load/http_response_parser.h"

#include <charconv>
#include <cstdint>
#include <strings.h>

namespace chaosbench::bench::load {
namespace {

bool header_is(std::string_view line, std::string_view name) {
  return line.size() > name.size() && line[name.size()] == ':' &&
         strncasecmp(line.data(), name.data(), name.size()) == 0;
}

std::string_view header_value(std::string_view line, std::size_t name_size) {
  auto value = line.substr(name_size + 1);
  while (!value.empty() && (value.front() == ' ' || value.front() == '\t')) value.remove_prefix(1);
  while (!value.empty() && (value.back() == ' ' || value.back() == '\t')) value.remove_suffix(1);
  return value;
}

bool equals_nocase(std::string_view a, std::string_view b) {
  return a.size() == b.size() && strncasecmp(a.data(), b.data(), a.size()) == 0;
}

}  // namespace

bool HttpResponseParser::parse_head(std::string_view head) {
  // "HTTP/1.1 200 OK"
  if (head.size() < 12 || head.substr(0, 5) != "HTTP/") return false;
  const auto space = head.find(' ');
  if (space == std::string_view::npos || space + 4 > head.size()) return false;
  auto [end, ec] = std::from_chars(head.data() + space + 1, head.data() + space + 4, status_);
  if (ec != std::errc() || end != head.data() + space + 4 || status_ < 100) return false;
  keep_alive_ = head.substr(0, 8) != "HTTP/1.0";
  content_length_ = 0;
  chunked_ = false;
  bool seen_length = false;
  std::size_t pos = head.find("\r\n");
  while (pos != std::string_view::npos && pos + 2 < head.size()) {
    const auto next = head.find("\r\n", pos + 2);
    const auto line = head.substr(pos + 2, (next == std::string_view::npos ? head.size() : next) - pos - 2);
    if (header_is(line, "content-length")) {
      // Digits only (from_chars would take a sign), at most kMaxBody: the total
      // header + body must not overflow. A second, different value is malformed.
      const auto v = header_value(line, 14);
      std::uint64_t length = 0;
      auto [e, err] = std::from_chars(v.data(), v.data() + v.size(), length);
      if (v.empty() || v.front() == '-' || err != std::errc() || e != v.data() + v.size() || length > kMaxBody)
        return false;
      if (seen_length && length != content_length_) return false;
      seen_length = true;
      content_length_ = static_cast<std::size_t>(length);
    } else if (header_is(line, "connection")) {
      const auto v = header_value(line, 10);
      if (equals_nocase(v, "close")) keep_alive_ = false;
      if (equals_nocase(v, "keep-alive")) keep_alive_ = true;
    } else if (header_is(line, "transfer-encoding")) {
      chunked_ = !equals_nocase(header_value(line, 17), "identity");
    }
    pos = next;
  }
  return !chunked_;
}

HttpResponseParser::Outcome HttpResponseParser::parse(std::string_view data) {
  const auto head_end = data.find("\r\n\r\n");
  if (head_end == std::string_view::npos) return data.size() > 64 * 1024 ? Outcome::kMalformed : Outcome::kNeedMore;
  if (!parse_head(data.substr(0, head_end))) return Outcome::kMalformed;
  const std::size_t total = head_end + 4 + content_length_;
  if (data.size() < total) return Outcome::kNeedMore;
  consumed_ = total;
  return Outcome::kComplete;
}

}  // namespace chaosbench::bench::load
