// The trainer's hang watchdog, as PyTorch's NCCL watchdog (TORCH_NCCL_ASYNC_ERROR_HANDLING)
// does for a collective that never completes: a thread that, when one step has been in
// progress longer than `limit`, reports failure_detected {reason: "hang"} on a metrics
// connection of its own and ends the process with kTrainHung, since a thread stuck in a
// device call or a collective cannot be unwound. Recovery (restart or elastic re-join)
// then proceeds as for any rank that died.
// Threads: begin/end from the compute thread; the watchdog thread only reads atomics.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <thread>

namespace chaosbench::bench::train {

inline constexpr int kTrainHung = 124;  // the exit code of a rank the watchdog ended (as timeout(1))

class StepWatchdog {
 public:
  // limit 0: off (no thread). `rank` names the rank in the report.
  StepWatchdog(std::chrono::milliseconds limit, int rank);
  ~StepWatchdog();
  StepWatchdog(const StepWatchdog&) = delete;
  StepWatchdog& operator=(const StepWatchdog&) = delete;

  void begin_step(std::int64_t step);  // computing `step` from now on
  void end_step();

 private:
  void loop();

  std::chrono::milliseconds limit_;
  int rank_;
  std::atomic<std::int64_t> step_{0};
  std::atomic<std::int64_t> started_ns_{0};  // steady clock; 0 between steps
  std::mutex mutex_;
  std::condition_variable cv_;
  bool stop_ = false;  // under mutex_
  std::thread thread_;
};

}  // namespace chaosbench::bench::train
