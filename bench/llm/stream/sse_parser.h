// An incremental Server-Sent Events parser, following the WHATWG HTML
// Standard's "event stream interpretation" (§9.2.6): lines end in CRLF, LF or
// CR (also split across feeds); one leading UTF-8 BOM is dropped; ":" starts a
// comment; "name: value" drops one space after the colon; a line without a
// colon is a field with an empty value; `data` lines join with "\n"; `id`
// containing NUL is ignored and the last event ID persists across events;
// `retry` is taken only when all ASCII digits; unknown fields are ignored; a
// blank line dispatches the event unless its data buffer is empty; an
// unfinished event at end of stream is dropped. Bytes are passed through
// undecoded (invalid UTF-8 is left for the consumer, e.g. a JSON parser, to
// refuse). Bounded: one event's buffered bytes (data, type, current line) past
// max_event_bytes is an error state that stays. Not thread-safe; one parser per
// stream.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "bench/llm/stream/sse_event.h"

namespace chaosbench::bench::llm {

class SseParser {
 public:
  static constexpr std::size_t kDefaultMaxEventBytes = 1 << 20;

  // `event` points at the dispatched event, valid until the next call; nullptr
  // if none.
  struct Step {
    std::size_t consumed = 0;
    const SseEvent *event = nullptr;
  };

  explicit SseParser(std::size_t max_event_bytes = kDefaultMaxEventBytes);

  // Reads `bytes` until one event is dispatched or the bytes run out. Unless
  // failed(), consumed > 0 for non-empty bytes. Allocates only to grow its
  // buffers.
  Step step(std::string_view bytes);

  // Loops step() over `bytes`, calling on_event(const SseEvent&) for each
  // event. Returns false once failed() (the rest of the bytes is ignored).
  template <class OnEvent>
  bool feed(std::string_view bytes, OnEvent &&on_event) {
    while (!bytes.empty() && !failed_) {
      const Step s = step(bytes);
      bytes.remove_prefix(s.consumed);
      if (s.event != nullptr) on_event(*s.event);
    }
    return !failed_;
  }

  // Whether an event is partly read (a line or fields without their dispatching
  // blank line): at end of stream it is dropped, which a caller may count as
  // truncation.
  bool pending() const { return !line_.empty() || !data_.empty() || !type_.empty(); }
  bool failed() const { return failed_; }
  // The stream's reconnection time from the last valid `retry` field, if any.
  std::optional<std::uint64_t> retry_ms() const { return retry_ms_; }
  const std::string &last_event_id() const { return last_event_id_; }

 private:
  bool take_byte(char c);  // true when an event was dispatched
  bool end_line();         // likewise
  void process_field(std::string_view name, std::string_view value);
  bool dispatch();
  bool over_limit() const { return line_.size() + data_.size() + type_.size() > max_event_bytes_; }

  std::size_t max_event_bytes_;
  bool failed_ = false;
  std::size_t bom_seen_ = 0;  // bytes of a leading BOM matched so far
  bool bom_done_ = false;
  bool after_cr_ = false;  // the last line ended in CR: an LF next is part of that end
  std::string line_;
  std::string data_;  // each data line's value plus "\n", as the standard builds it
  std::string type_;
  std::string last_event_id_;
  std::optional<std::uint64_t> retry_ms_;
  SseEvent event_;
};

}  // namespace chaosbench::bench::llm
