// The paged KV cache's block allocator (vLLM's PagedAttention: Kwon et al., "Efficient
// Memory Management for Large Language Model Serving with PagedAttention", SOSP 2023):
// `blocks` fixed-size blocks handed out from a free list, so a sequence's cache grows one
// block at a time and any free block serves any sequence (no fragmentation by length).
// Threads: one owner (the engine thread); used() is also readable from others.
#pragma once

#include <atomic>
#include <optional>
#include <vector>

namespace chaosbench::bench::llm {

class KvBlockAllocator {
 public:
  explicit KvBlockAllocator(int blocks);

  // A free block's index, or nullopt when none is left.
  std::optional<int> allocate();
  // Returns `block` to the free list; freeing a block twice or one out of range throws
  // std::logic_error (a scheduler bug, not a condition to survive).
  void release(int block);
  // All of `blocks`, then clears it.
  void release_all(std::vector<int>& blocks);

  int capacity() const { return static_cast<int>(in_use_.size()); }
  int free_count() const { return static_cast<int>(free_.size()); }
  int used() const { return used_.load(std::memory_order_relaxed); }  // any thread
  double usage() const { return capacity() == 0 ? 0.0 : static_cast<double>(used()) / capacity(); }

 private:
  std::vector<int> free_;     // a stack: the most recently freed block is reused first (warm in cache)
  std::vector<bool> in_use_;  // per block, to catch double frees
  std::atomic<int> used_{0};
};

}  // namespace chaosbench::bench::llm
