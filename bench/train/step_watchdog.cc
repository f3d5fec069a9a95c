#include "bench/train/step_watchdog.h"

#include <unistd.h>

#include <fmt/format.h>

#include "bench/protocol/metrics_client.h"

namespace chaosbench::bench::train {
namespace {

std::int64_t steady_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

}  // namespace

StepWatchdog::StepWatchdog(std::chrono::milliseconds limit, int rank) : limit_(limit), rank_(rank) {
  if (limit_.count() > 0) thread_ = std::thread([this] { loop(); });
}

StepWatchdog::~StepWatchdog() {
  {
    std::lock_guard lock(mutex_);
    stop_ = true;
  }
  cv_.notify_all();
  if (thread_.joinable()) thread_.join();
}

void StepWatchdog::begin_step(std::int64_t step) {
  step_.store(step);
  started_ns_.store(steady_ns());
}

void StepWatchdog::end_step() { started_ns_.store(0); }

void StepWatchdog::loop() {
  const auto poll = std::min(std::chrono::milliseconds(100), std::max(limit_ / 10, std::chrono::milliseconds(1)));
  std::unique_lock lock(mutex_);
  while (!cv_.wait_for(lock, poll, [&] { return stop_; })) {
    const std::int64_t started = started_ns_.load();
    if (started == 0 || steady_ns() - started < std::chrono::nanoseconds(limit_).count()) continue;
    const std::string error = fmt::format("step {} did not complete in {} ms (watchdog)", step_.load(), limit_.count());
    fmt::print(stderr, "rank {}: {}: ending the process\n", rank_, error);
    // The compute thread owns the rank's metrics connection and may hold it mid-record:
    // this report goes on a connection of its own.
    auto metrics = MetricsClient::from_environment();
    metrics.event("failure_detected", {{"step", step_.load() - 1}, {"error", error}, {"reason", std::string("hang")}});
    metrics.flush();
    std::fflush(stderr);
    _exit(kTrainHung);
  }
}

}  // namespace chaosbench::bench::train
