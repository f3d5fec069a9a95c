// A thread that calls a function once a period until stopped: the loop the run's
// samplers share (node_telemetry.h, live_diagnosis.h). Ticks keep to the schedule (start +
// k periods; one that overran is not made up), and stop() wakes the thread at once.
// Threads: start() and stop() from one thread; `tick` runs on the thread of its own.
#pragma once

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <functional>
#include <mutex>
#include <thread>

namespace chaosbench::harness {

class PeriodicThread {
 public:
  PeriodicThread() = default;
  ~PeriodicThread() { stop(); }
  PeriodicThread(const PeriodicThread&) = delete;
  PeriodicThread& operator=(const PeriodicThread&) = delete;

  // Starts the thread: `tick` one period from now, then every period. A no-op if running.
  void start(std::chrono::nanoseconds period, std::function<void()> tick) {
    if (thread_.joinable()) return;
    stopping_ = false;
    thread_ = std::thread([this, period, tick = std::move(tick)] {
      auto next = std::chrono::steady_clock::now() + period;
      std::unique_lock lock(mu_);
      while (!cv_.wait_until(lock, next, [this] { return stopping_; })) {
        lock.unlock();
        tick();
        lock.lock();
        next = std::max(next + period, std::chrono::steady_clock::now());
      }
    });
  }

  // Wakes the thread and joins it (a tick under way finishes first). Idempotent.
  void stop() {
    if (!thread_.joinable()) return;
    {
      std::lock_guard lock(mu_);
      stopping_ = true;
    }
    cv_.notify_all();
    thread_.join();
  }

 private:
  std::thread thread_;
  std::mutex mu_;
  std::condition_variable cv_;
  bool stopping_ = false;  // under mu_
};

}  // namespace chaosbench::harness
