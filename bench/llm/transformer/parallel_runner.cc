// The engine's helper threads. See parallel_runner.h.
#include "bench/llm/transformer/parallel_runner.h"

#include <algorithm>

namespace chaosbench::bench::llm {

ParallelRunner::ParallelRunner(int threads) {
  for (int i = 1; i < std::max(1, threads); ++i) helpers_.emplace_back([this, i] { helper(i); });
}

ParallelRunner::~ParallelRunner() {
  {
    std::lock_guard lock(mu_);
    stop_ = true;
  }
  start_.notify_all();
  for (auto& t : helpers_) t.join();
}

void ParallelRunner::run(int parts, const std::function<void(int)>& fn) {
  parts = std::clamp(parts, 1, threads());
  if (parts > 1) {
    std::lock_guard lock(mu_);
    fn_ = &fn;
    parts_ = parts;
    pending_ = parts - 1;
    ++generation_;
  }
  if (parts > 1) start_.notify_all();
  fn(0);
  if (parts == 1) return;
  std::unique_lock lock(mu_);
  done_.wait(lock, [&] { return pending_ == 0; });
}

void ParallelRunner::helper(int index) {
  std::uint64_t seen = 0;
  for (;;) {
    const std::function<void(int)>* fn = nullptr;
    {
      std::unique_lock lock(mu_);
      start_.wait(lock, [&] { return stop_ || generation_ != seen; });
      if (stop_) return;
      seen = generation_;
      if (index < parts_) fn = fn_;
    }
    if (fn == nullptr) continue;  // this call has fewer parts than helpers
    (*fn)(index);
    std::lock_guard lock(mu_);
    if (--pending_ == 0) done_.notify_one();
  }
}

}  // namespace chaosbench::bench::llm
