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
#include <vector>

namespace chaosbench::harness {

// A field of a timeline line: key and an already-encoded JSON value.
using TimelineField = std::pair<std::string, std::string>;

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

  // JSON encoders for field values.
  static std::string str(std::string_view s);
  static std::string num(double v);
  // A protocol label or field value: strings quoted, numbers as results.json writes them.
  static std::string value(const bench::LabelValue& v);

 private:
  std::mutex mutex_;
  std::FILE* file_ = nullptr;
};

}  // namespace chaosbench::harness
