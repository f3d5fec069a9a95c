// The paged KV cache: keys and values of every layer in `blocks` blocks of `block_size`
// token slots, and the allocator of those blocks. A sequence's block table (its blocks in
// order) maps its position p to block table[p / block_size], slot p % block_size; the
// attention reads K/V through it (PagedAttention, Kwon et al., SOSP 2023).
// The memory is allocated once and left untouched until used, so a large cache costs only
// the pages its sequences reach.
// Threads: one owner (the engine thread); allocator().used() is readable from others.
#pragma once

#include <cstddef>
#include <memory>

#include "bench/llm/transformer/kv_block_allocator.h"

namespace chaosbench::bench::llm {

class PagedKvCache {
 public:
  // kv_dim: key (and value) floats per token and layer (kv_heads x head size).
  PagedKvCache(int layers, int blocks, int block_size, int kv_dim);

  float* key(int layer, int block, int slot) { return keys_.get() + offset(layer, block, slot); }
  float* value(int layer, int block, int slot) { return values_.get() + offset(layer, block, slot); }
  const float* key(int layer, int block, int slot) const { return keys_.get() + offset(layer, block, slot); }
  const float* value(int layer, int block, int slot) const { return values_.get() + offset(layer, block, slot); }

  int block_size() const { return block_size_; }
  int blocks() const { return blocks_; }
  int kv_dim() const { return kv_dim_; }
  // Blocks that hold `tokens` positions.
  int blocks_for(int tokens) const { return (tokens + block_size_ - 1) / block_size_; }

  KvBlockAllocator& allocator() { return allocator_; }
  const KvBlockAllocator& allocator() const { return allocator_; }

 private:
  std::size_t offset(int layer, int block, int slot) const {
    return ((static_cast<std::size_t>(layer) * blocks_ + block) * block_size_ + slot) * kv_dim_;
  }

  int layers_, blocks_, block_size_, kv_dim_;
  std::unique_ptr<float[]> keys_;    // [layer][block][slot][kv_dim]
  std::unique_ptr<float[]> values_;  // same
  KvBlockAllocator allocator_;
};

}  // namespace chaosbench::bench::llm
