// Makes the next step's batch on a thread of its own while the step runs, as a data
// loader prefetches: one persistent thread at the lowest priority (SCHED_IDLE), so it
// fills the time its rank waits rather than taking cores from the ranks that compute.
// start(job) hands a job over (the previous one must have been taken by wait()); wait()
// blocks until it is done and rethrows what it threw.
// Threads: start and wait from one thread; the job runs on the prefetcher's own, which
// the destructor joins (after the job in flight).
#pragma once

#include <condition_variable>
#include <exception>
#include <functional>
#include <mutex>
#include <thread>

namespace chaosbench::bench::train {

class BatchPrefetcher {
 public:
  BatchPrefetcher();
  ~BatchPrefetcher();
  BatchPrefetcher(const BatchPrefetcher&) = delete;
  BatchPrefetcher& operator=(const BatchPrefetcher&) = delete;

  void start(std::function<void()> job);
  void wait();
  bool busy() const { return pending_; }  // a job started and not yet waited for

 private:
  void loop();

  std::mutex mutex_;
  std::condition_variable cv_;
  std::function<void()> job_;   // under mutex_: the job to run, empty when none
  bool done_ = false;           // under mutex_: the job ran
  bool stop_ = false;           // under mutex_
  std::exception_ptr error_;    // under mutex_
  bool pending_ = false;        // caller's thread only
  std::thread thread_;
};

}  // namespace chaosbench::bench::train
