// Per-thread scheduling priority (Linux: nice values are per thread, and a new thread
// inherits its creator's). Communication threads use it the way NCCL gives collectives a
// high-priority stream: on a machine whose cores the compute threads fill, a collective
// stalls whenever any rank's communication thread waits for a time slice, so those
// threads go first. Raising priority needs CAP_SYS_NICE (root); without it nothing
// changes and the caller carries on.
#pragma once

#include <sys/resource.h>
#include <unistd.h>

namespace chaosbench::bench {

// The nice value of communication threads (the trainer's allreduce thread and gloo's
// transport loop). Measured here, 4 ranks on 2 cores, default model: the share of the
// gradient allreduce hidden behind backward went from about 35% to about 48% with it.
inline constexpr int kCommThreadNice = -10;

// Sets the calling thread's nice value; false when not permitted.
inline bool set_thread_nice(int nice) {
  return ::setpriority(PRIO_PROCESS, static_cast<id_t>(::gettid()), nice) == 0;
}

inline int thread_nice() { return ::getpriority(PRIO_PROCESS, static_cast<id_t>(::gettid())); }

// For the lifetime of the object, the calling thread runs at `nice` (threads it creates
// meanwhile keep it); the old value comes back after.
class ScopedThreadNice {
 public:
  explicit ScopedThreadNice(int nice) : old_(thread_nice()) { changed_ = set_thread_nice(nice); }
  ~ScopedThreadNice() {
    if (changed_) set_thread_nice(old_);
  }
  ScopedThreadNice(const ScopedThreadNice&) = delete;
  ScopedThreadNice& operator=(const ScopedThreadNice&) = delete;

 private:
  int old_;
  bool changed_ = false;
};

}  // namespace chaosbench::bench
