// Raises the harness thread's scheduling priority for the length of a run; see below.
#pragma once

#include <cerrno>
#include <optional>
#include <sched.h>
#include <sys/resource.h>
#include <unistd.h>

namespace chaosbench::harness {

// While a run goes, the harness's own thread runs with real-time priority (SCHED_FIFO 1,
// root only; nice -10 where that is refused): fault timing is what it measures
// (fault/apply_latency), and when the workload fills every core it would otherwise wait
// for a time slice. The thread sleeps between actions, and the kernel's real-time
// throttling bounds it anyway. SCHED_RESET_ON_FORK gives children the normal policy, and
// the supervisor resets their nice value. Per-thread; restored when the run ends.
class PriorityBoost {
 public:
  PriorityBoost() {
    if (::geteuid() != 0) return;
    sched_param param{};
    if (::sched_getparam(0, &saved_param_) == 0 && (saved_policy_ = ::sched_getscheduler(0)) >= 0) {
      param.sched_priority = 1;
      if (::sched_setscheduler(0, SCHED_FIFO | SCHED_RESET_ON_FORK, &param) == 0) {
        realtime_ = true;
        return;
      }
    }
    errno = 0;
    int nice = ::getpriority(PRIO_PROCESS, 0);
    if (errno == 0 && ::setpriority(PRIO_PROCESS, 0, -10) == 0) saved_nice_ = nice;
  }
  ~PriorityBoost() {
    if (realtime_) ::sched_setscheduler(0, saved_policy_, &saved_param_);
    if (saved_nice_) ::setpriority(PRIO_PROCESS, 0, *saved_nice_);
  }
  PriorityBoost(const PriorityBoost&) = delete;
  PriorityBoost& operator=(const PriorityBoost&) = delete;

 private:
  bool realtime_ = false;
  int saved_policy_ = SCHED_OTHER;
  sched_param saved_param_{};
  std::optional<int> saved_nice_;
};

}  // namespace chaosbench::harness
