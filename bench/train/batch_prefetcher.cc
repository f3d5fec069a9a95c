#include "bench/train/batch_prefetcher.h"

#include <sched.h>

#include <utility>

#include "bench/common/thread_priority.h"

namespace chaosbench::bench::train {
namespace {

// SCHED_IDLE: the thread runs only on a core nothing else wants, and any thread that
// wakes takes the core from it at once (a nice value of 19 still delayed the woken TP
// peers by ~0.1 ms per exchange here). Where it is refused, the lowest nice value.
void lowest_priority() {
  sched_param param{};
  if (::sched_setscheduler(0, SCHED_IDLE, &param) != 0) set_thread_nice(19);
}

}  // namespace

BatchPrefetcher::BatchPrefetcher() : thread_([this] { loop(); }) {}

BatchPrefetcher::~BatchPrefetcher() {
  {
    const std::lock_guard<std::mutex> lock(mutex_);
    stop_ = true;
  }
  cv_.notify_all();
  thread_.join();
}

void BatchPrefetcher::start(std::function<void()> job) {
  {
    const std::lock_guard<std::mutex> lock(mutex_);
    job_ = std::move(job);
    done_ = false;
    error_ = nullptr;
  }
  pending_ = true;
  cv_.notify_all();
}

void BatchPrefetcher::wait() {
  if (!pending_) return;
  std::unique_lock<std::mutex> lock(mutex_);
  cv_.wait(lock, [&] { return done_; });
  pending_ = false;
  if (error_) std::rethrow_exception(std::exchange(error_, nullptr));
}

void BatchPrefetcher::loop() {
  lowest_priority();
  std::unique_lock<std::mutex> lock(mutex_);
  for (;;) {
    cv_.wait(lock, [&] { return stop_ || job_; });
    if (stop_) return;
    auto job = std::exchange(job_, nullptr);
    lock.unlock();
    std::exception_ptr error;
    try {
      job();
    } catch (...) {
      error = std::current_exception();
    }
    lock.lock();
    error_ = error;
    done_ = true;
    cv_.notify_all();
  }
}

}  // namespace chaosbench::bench::train
