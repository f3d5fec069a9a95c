// The continuous-batching scheduler. See batch_scheduler.h.
#include "bench/llm/transformer/batch_scheduler.h"

#include <algorithm>

namespace chaosbench::bench::llm {

BatchScheduler::BatchScheduler(const LlmServeSettings::Scheduler& cfg, PagedKvCache& cache)
    : cfg_(cfg), cache_(cache) {}

void BatchScheduler::add(std::shared_ptr<Sequence> seq) {
  waiting_.push_back(std::move(seq));
  publish();
}

void BatchScheduler::publish() {
  running_count_.store(running_.size(), std::memory_order_relaxed);
  waiting_count_.store(waiting_.size(), std::memory_order_relaxed);
}

// Blocks until `seq` covers `positions`; false when the cache ran out (what it got stays).
bool BatchScheduler::grow(Sequence& seq, int positions) {
  while (static_cast<int>(seq.blocks.size()) < cache_.blocks_for(positions)) {
    const auto b = cache_.allocator().allocate();
    if (!b) return false;
    seq.blocks.push_back(*b);
  }
  return true;
}

void BatchScheduler::preempt_newest() {
  auto victim = std::move(running_.back());
  running_.pop_back();
  cache_.allocator().release_all(victim->blocks);
  victim->computed = 0;
  waiting_.push_front(std::move(victim));
  preemptions_.fetch_add(1, std::memory_order_relaxed);
}

BatchScheduler::Plan BatchScheduler::schedule() {
  Plan plan;
  int budget = cfg_.max_batched_tokens;
  for (std::size_t i = 0; i < running_.size() && budget > 0;) {
    Sequence& s = *running_[i];
    const int n = std::min(s.pending(), budget);
    bool preempted_self = false;
    while (!grow(s, s.computed + n)) {
      preempted_self = running_.back().get() == &s;
      preempt_newest();
      ++plan.preempted;
      if (preempted_self) break;
    }
    if (preempted_self) break;  // it was the newest: nothing after it runs
    plan.items.push_back({&s, s.computed, n, s.computed + n == static_cast<int>(s.tokens.size())});
    budget -= n;
    ++i;
  }
  // Admissions, unless this step had to preempt (memory is short: let the batch drain).
  while (plan.preempted == 0 && budget > 0 && !waiting_.empty() &&
         running_.size() < static_cast<std::size_t>(cfg_.max_running)) {
    Sequence& s = *waiting_.front();
    const int n = std::min(s.pending(), budget);
    if (!grow(s, s.computed + n)) {
      cache_.allocator().release_all(s.blocks);  // keep the free blocks for the running batch
      break;
    }
    running_.push_back(std::move(waiting_.front()));
    waiting_.pop_front();
    plan.items.push_back({&s, s.computed, n, s.computed + n == static_cast<int>(s.tokens.size())});
    budget -= n;
  }
  publish();
  return plan;
}

void BatchScheduler::remove(const Sequence* seq) {
  auto match = [seq](const std::shared_ptr<Sequence>& s) { return s.get() == seq; };
  if (auto it = std::find_if(running_.begin(), running_.end(), match); it != running_.end()) {
    cache_.allocator().release_all((*it)->blocks);
    running_.erase(it);
  } else if (auto w = std::find_if(waiting_.begin(), waiting_.end(), match); w != waiting_.end()) {
    cache_.allocator().release_all((*w)->blocks);
    waiting_.erase(w);
  }
  publish();
}

std::vector<std::shared_ptr<Sequence>> BatchScheduler::all() const {
  std::vector<std::shared_ptr<Sequence>> out(running_.begin(), running_.end());
  out.insert(out.end(), waiting_.begin(), waiting_.end());
  return out;
}

}  // namespace chaosbench::bench::llm
