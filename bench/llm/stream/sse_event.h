// One dispatched Server-Sent Event, a plain value (sse_parser.h makes them).
#pragma once

#include <string>

namespace chaosbench::bench::llm {

struct SseEvent {
  std::string type = "message";  // the `event` field, or "message" when none or empty
  std::string data;              // `data` lines joined with "\n"
  std::string last_event_id;     // the stream's last event ID when this was dispatched

  bool operator==(const SseEvent &) const = default;
};

}  // namespace chaosbench::bench::llm
