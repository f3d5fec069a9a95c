// timeline.jsonl: every event of a run as it happened, one JSON object per line, written
// and flushed at once so the file survives a crash of the harness.
// Threads: write() may be called from any thread.
#pragma once

#include "bench/protocol/record.h"

#include <cstdio>
#include <mutex>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

namespace chaosbench::harness {

// A field value of a timeline line, typed (a list is a list of strings); write() encodes it (a non-finite number as
// null), so no caller writes JSON.
using TimelineValue = std::variant<std::nullptr_t, bool, std::int64_t, double, std::string, std::vector<std::string>>;
using TimelineField = std::pair<std::string, TimelineValue>;

class TimelineLog {
 public:
  TimelineLog() = default;
  explicit TimelineLog(const std::string& path);  // throws std::runtime_error
  ~TimelineLog();
  TimelineLog(const TimelineLog&) = delete;
  TimelineLog& operator=(const TimelineLog&) = delete;

  // {"t": t_s, "event": event, fields...}; t_s is seconds since the workload started
  // (negative during set-up).
  void write(double t_s, std::string_view event, const std::vector<TimelineField>& fields = {});

  // Field values, named by kind so a call site reads as its line does.
  static TimelineValue str(std::string_view s) { return std::string(s); }
  static TimelineValue num(double v) { return v; }
  // A protocol label or field value: a string, an integer or a number.
  static TimelineValue value(const bench::LabelValue& v);
  // The JSON text of a value, as write() puts it in the line.
  static std::string encode(const TimelineValue& v);

 private:
  std::mutex mutex_;
  std::FILE* file_ = nullptr;
};

}  // namespace chaosbench::harness
