#include "harness/run/progress_line.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <mutex>
#include <unistd.h>

#include <spdlog/sinks/base_sink.h>
#include <spdlog/spdlog.h>

namespace chaosbench::harness {
namespace {

constexpr double kRedrawS = 0.25;

// Clears the status line before the logger's own sink writes a message.
class ClearLineSink final : public spdlog::sinks::base_sink<std::mutex> {
 protected:
  void sink_it_(const spdlog::details::log_msg&) override {
    std::fputs("\r\033[K", stderr);
    std::fflush(stderr);
  }
  void flush_() override {}
};

double now_s() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

}  // namespace

ProgressLine::ProgressLine(bool enabled) : enabled_(enabled && ::isatty(STDERR_FILENO) == 1) {
  if (!enabled_) return;
  clearer_ = std::make_shared<ClearLineSink>();
  auto& sinks = spdlog::default_logger()->sinks();
  sinks.insert(sinks.begin(), clearer_);
}

ProgressLine::~ProgressLine() {
  if (!enabled_) return;
  auto& sinks = spdlog::default_logger()->sinks();
  sinks.erase(std::remove(sinks.begin(), sinks.end(), clearer_), sinks.end());
  std::fputs("\r\033[K", stderr);
  std::fflush(stderr);
}

void ProgressLine::show(const std::string& text) {
  if (!enabled_) return;
  const double t = now_s();
  if (last_draw_ >= 0 && t - last_draw_ < kRedrawS) return;
  last_draw_ = t;
  std::fprintf(stderr, "\r\033[K%s", text.c_str());
  std::fflush(stderr);
}

}  // namespace chaosbench::harness
