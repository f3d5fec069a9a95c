// Iteration-level (continuous) batching as vLLM schedules it (Yu et al., "Orca", OSDI
// 2022; vLLM's scheduler with chunked prefill): every engine step takes, within
// max_batched_tokens, first the running sequences in admission order (a decode is one
// token, an unfinished prefill its next chunk), then waiting sequences from the front of
// the queue while fewer than max_running run. Sequences join and leave the batch at any
// step. KV blocks are allocated as positions need them; when a running sequence needs a
// block and none is free, the newest running sequence is preempted by recomputation
// (blocks freed, back to the front of the queue, counted) — itself when it is the newest.
// A waiting sequence is admitted only when its chunk's blocks are free (admission never
// preempts).
// Threads: one owner (the engine thread); the counts are readable from others.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <memory>
#include <vector>

#include "bench/llm/llm_serve_settings.h"
#include "bench/llm/transformer/paged_kv_cache.h"
#include "bench/llm/transformer/sequence.h"

namespace chaosbench::bench::llm {

class BatchScheduler {
 public:
  struct Item {
    Sequence* seq = nullptr;
    int start = 0;        // first position computed this step
    int count = 0;        // tokens computed this step
    bool sample = false;  // the chunk reaches the end: sample the next token
  };
  struct Plan {
    std::vector<Item> items;
    int preempted = 0;
  };

  BatchScheduler(const LlmServeSettings::Scheduler& cfg, PagedKvCache& cache);

  // Queues a new sequence at the back.
  void add(std::shared_ptr<Sequence> seq);
  // The next step; its items' sequences are running and own blocks for their positions.
  Plan schedule();
  // Takes `seq` out (finished or cancelled), wherever it is, and frees its blocks; a no-op
  // for an unknown one.
  void remove(const Sequence* seq);
  // Every sequence, running first, then waiting (for cancellation sweeps and shutdown).
  std::vector<std::shared_ptr<Sequence>> all() const;

  std::size_t running() const { return running_count_.load(std::memory_order_relaxed); }
  std::size_t waiting() const { return waiting_count_.load(std::memory_order_relaxed); }
  std::uint64_t preemptions() const { return preemptions_.load(std::memory_order_relaxed); }

 private:
  bool grow(Sequence& seq, int positions);
  void preempt_newest();
  void publish();

  LlmServeSettings::Scheduler cfg_;
  PagedKvCache& cache_;
  std::vector<std::shared_ptr<Sequence>> running_;  // admission order
  std::deque<std::shared_ptr<Sequence>> waiting_;
  std::atomic<std::size_t> running_count_{0}, waiting_count_{0};
  std::atomic<std::uint64_t> preemptions_{0};
};

}  // namespace chaosbench::bench::llm
