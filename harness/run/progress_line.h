// The live status line of a run on a terminal: elapsed time, phase, step, active faults
// and an ETA, redrawn in place (carriage return) at most four times a second. Log lines
// clear it first and it is drawn again on the next update, so the two never mix. Off
// when stderr is not a terminal or with --quiet: plain log lines only.
// Threads: show() from the runner's thread; logging from any.
#pragma once

#include <memory>
#include <string>

#include <spdlog/sinks/sink.h>

namespace chaosbench::harness {

class ProgressLine {
 public:
  explicit ProgressLine(bool enabled);
  ~ProgressLine();  // clears the line
  ProgressLine(const ProgressLine&) = delete;
  ProgressLine& operator=(const ProgressLine&) = delete;

  bool enabled() const { return enabled_; }
  void show(const std::string& text);

 private:
  bool enabled_;
  double last_draw_ = -1;
  std::shared_ptr<spdlog::sinks::sink> clearer_;  // first sink of the default logger
};

}  // namespace chaosbench::harness
