// Splits one piece of the engine's step over a few threads: run(parts, fn) calls fn(0) on
// the calling thread and fn(1..parts-1) on helper threads, and returns when all are done.
// The engine uses it for each GEMM's output channels and the attention's rows: a decode
// step is ~40 such calls of a few hundred microseconds, so a condition variable's wake-up
// alone would cost a tenth of it. Helpers and the caller therefore spin for a short while
// (kSpin) before they sleep: between steps and when idle they sleep, so an idle server
// costs nothing.
// Threads: run() from one thread at a time (the engine thread); fn must not throw.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace chaosbench::bench::llm {

class ParallelRunner {
 public:
  static constexpr std::chrono::microseconds kSpin{100};

  // threads: the most parts a call may have (1: no helpers; everything on the caller).
  explicit ParallelRunner(int threads);
  ~ParallelRunner();
  ParallelRunner(const ParallelRunner&) = delete;
  ParallelRunner& operator=(const ParallelRunner&) = delete;

  int threads() const { return static_cast<int>(helpers_.size()) + 1; }
  // parts is clamped to 1..threads().
  void run(int parts, const std::function<void(int part)>& fn);

 private:
  void helper(int index);

  std::mutex mu_;
  std::condition_variable start_, done_;
  const std::function<void(int)>* fn_ = nullptr;  // written under mu_ before generation_
  int parts_ = 0;
  std::atomic<std::uint64_t> generation_{0};  // bumped under mu_ per call
  std::atomic<int> pending_{0};               // helpers still running this call
  bool stop_ = false;
  std::vector<std::thread> helpers_;
};

}  // namespace chaosbench::bench::llm
