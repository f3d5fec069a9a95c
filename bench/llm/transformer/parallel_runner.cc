// The engine's helper threads. See parallel_runner.h.
#include "bench/llm/transformer/parallel_runner.h"

#include <algorithm>

namespace chaosbench::bench::llm {
namespace {

// Spins until ready() or kSpin has passed; true when ready.
template <typename Ready>
bool spin_until(Ready ready) {
  const auto end = std::chrono::steady_clock::now() + ParallelRunner::kSpin;
  for (int i = 0;; ++i) {
    if (ready()) return true;
    if ((i & 63) == 63 && std::chrono::steady_clock::now() >= end) return false;
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#endif
  }
}

}  // namespace

ParallelRunner::ParallelRunner(int threads) {
  for (int i = 1; i < std::max(1, threads); ++i) helpers_.emplace_back([this, i] { helper(i); });
}

ParallelRunner::~ParallelRunner() {
  {
    std::lock_guard lock(mu_);
    stop_ = true;
    generation_.fetch_add(1);
  }
  start_.notify_all();
  for (auto& t : helpers_) t.join();
}

void ParallelRunner::run(int parts, const std::function<void(int)>& fn) {
  parts = std::clamp(parts, 1, threads());
  if (parts == 1) return fn(0);
  {
    std::lock_guard lock(mu_);
    fn_ = &fn;
    parts_ = parts;
    pending_.store(parts - 1);
    generation_.fetch_add(1);
  }
  start_.notify_all();
  fn(0);
  if (spin_until([&] { return pending_.load() == 0; })) return;
  std::unique_lock lock(mu_);
  done_.wait(lock, [&] { return pending_.load() == 0; });
}

void ParallelRunner::helper(int index) {
  std::uint64_t seen = 0;
  for (;;) {
    if (!spin_until([&] { return generation_.load() != seen; })) {
      std::unique_lock lock(mu_);
      start_.wait(lock, [&] { return generation_.load() != seen; });
    }
    const std::function<void(int)>* fn = nullptr;
    {
      std::lock_guard lock(mu_);
      if (stop_) return;
      seen = generation_.load();
      if (index < parts_) fn = fn_;
    }
    if (fn == nullptr) continue;  // this call has fewer parts than helpers
    (*fn)(index);
    if (pending_.fetch_sub(1) == 1) {
      std::lock_guard lock(mu_);
      done_.notify_one();
    }
  }
}

}  // namespace chaosbench::bench::llm
