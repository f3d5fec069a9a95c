#include "bench/llm/stream/sse_parser.h"

#include <algorithm>

namespace chaosbench::bench::llm {
namespace {

constexpr std::string_view kBom = "\xEF\xBB\xBF";

}  // namespace

SseParser::SseParser(std::size_t max_event_bytes) : max_event_bytes_(max_event_bytes) {}

SseParser::Step SseParser::step(std::string_view bytes) {
  Step s;
  while (s.consumed < bytes.size() && !failed_) {
    const char c = bytes[s.consumed++];
    if (!bom_done_) {
      // Only the stream's first bytes may be a BOM; a partial match that breaks
      // off was ordinary text after all, and is replayed as such.
      if (c == kBom[bom_seen_]) {
        if (++bom_seen_ == kBom.size()) bom_done_ = true;
        continue;
      }
      bom_done_ = true;
      // BOM bytes are never line ends, so replaying them dispatches nothing.
      for (std::size_t i = 0; i < bom_seen_; ++i) take_byte(kBom[i]);
    }
    if (take_byte(c)) {
      s.event = &event_;
      return s;
    }
  }
  return s;
}

bool SseParser::take_byte(char c) {
  if (c == '\n' && after_cr_) {  // the LF of a CRLF whose CR ended the line already
    after_cr_ = false;
    return false;
  }
  after_cr_ = c == '\r';
  if (c == '\r' || c == '\n') return end_line();
  line_.push_back(c);
  if (over_limit()) failed_ = true;
  return false;
}

bool SseParser::end_line() {
  const std::string_view line(line_);
  bool dispatched = false;
  if (line.empty()) {
    dispatched = dispatch();
  } else if (line.front() != ':') {  // ":..." is a comment
    const auto colon = line.find(':');
    if (colon == std::string_view::npos) {
      process_field(line, {});
    } else {
      auto value = line.substr(colon + 1);
      if (!value.empty() && value.front() == ' ') value.remove_prefix(1);
      process_field(line.substr(0, colon), value);
    }
  }
  line_.clear();
  if (over_limit()) failed_ = true;
  return dispatched && !failed_;
}

void SseParser::process_field(std::string_view name, std::string_view value) {
  if (name == "data") {
    data_.append(value);
    data_.push_back('\n');
  } else if (name == "event") {
    type_.assign(value);
  } else if (name == "id") {
    if (value.find('\0') == std::string_view::npos) last_event_id_.assign(value);
  } else if (name == "retry") {
    // All ASCII digits; a value too large for 64 bits is ignored as well.
    const bool digits = !value.empty() && value.size() <= 19 &&
                        std::all_of(value.begin(), value.end(), [](char c) { return c >= '0' && c <= '9'; });
    if (digits) {
      std::uint64_t ms = 0;
      for (const char c : value) ms = ms * 10 + static_cast<std::uint64_t>(c - '0');
      retry_ms_ = ms;
    }
  }
}

bool SseParser::dispatch() {
  if (data_.empty()) {  // no data field: nothing to dispatch, the type is
                        // forgotten too
    type_.clear();
    return false;
  }
  data_.pop_back();  // the "\n" after the last data line
  event_.type = type_.empty() ? std::string("message") : type_;
  event_.data.swap(data_);
  event_.last_event_id = last_event_id_;
  data_.clear();
  type_.clear();
  return true;
}

}  // namespace chaosbench::bench::llm
