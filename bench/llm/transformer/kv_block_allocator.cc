// The free-list block allocator. See kv_block_allocator.h.
#include "bench/llm/transformer/kv_block_allocator.h"

#include <stdexcept>
#include <string>

namespace chaosbench::bench::llm {

KvBlockAllocator::KvBlockAllocator(int blocks) : in_use_(static_cast<std::size_t>(blocks > 0 ? blocks : 0), false) {
  if (blocks < 1) throw std::invalid_argument("KvBlockAllocator: needs at least one block");
  free_.reserve(static_cast<std::size_t>(blocks));
  for (int b = blocks - 1; b >= 0; --b) free_.push_back(b);  // block 0 comes out first
}

std::optional<int> KvBlockAllocator::allocate() {
  if (free_.empty()) return std::nullopt;
  const int b = free_.back();
  free_.pop_back();
  in_use_[static_cast<std::size_t>(b)] = true;
  used_.fetch_add(1, std::memory_order_relaxed);
  return b;
}

void KvBlockAllocator::release(int block) {
  if (block < 0 || block >= capacity() || !in_use_[static_cast<std::size_t>(block)])
    throw std::logic_error("KvBlockAllocator: block " + std::to_string(block) + " is not allocated");
  in_use_[static_cast<std::size_t>(block)] = false;
  free_.push_back(block);
  used_.fetch_sub(1, std::memory_order_relaxed);
}

void KvBlockAllocator::release_all(std::vector<int>& blocks) {
  for (const int b : blocks) release(b);
  blocks.clear();
}

}  // namespace chaosbench::bench::llm
