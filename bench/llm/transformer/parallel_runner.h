// Splits one piece of the engine's step over a few threads: run(parts, fn) calls fn(0) on
// the calling thread and fn(1..parts-1) on helper threads, and returns when all are done.
// The engine uses it for what OpenBLAS does not parallelise for it: the attention's rows
// and the int8 GEMM's output channels. Helpers sleep on a condition variable between
// calls (no spinning: the io threads and OpenBLAS share the cores).
// Threads: run() from one thread at a time (the engine thread); fn must not throw.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace chaosbench::bench::llm {

class ParallelRunner {
 public:
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
  const std::function<void(int)>* fn_ = nullptr;
  int parts_ = 0;
  int pending_ = 0;
  std::uint64_t generation_ = 0;
  bool stop_ = false;
  std::vector<std::thread> helpers_;
};

}  // namespace chaosbench::bench::llm
