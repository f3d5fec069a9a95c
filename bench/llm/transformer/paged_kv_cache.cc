// The paged KV cache's storage. See paged_kv_cache.h.
#include "bench/llm/transformer/paged_kv_cache.h"

#include <stdexcept>

namespace chaosbench::bench::llm {

PagedKvCache::PagedKvCache(int layers, int blocks, int block_size, int kv_dim)
    : layers_(layers), blocks_(blocks), block_size_(block_size), kv_dim_(kv_dim), allocator_(blocks) {
  if (layers < 1 || block_size < 1 || kv_dim < 1) throw std::invalid_argument("PagedKvCache: bad shape");
  const std::size_t n = static_cast<std::size_t>(layers) * blocks * block_size * kv_dim;
  // For overwrite: no zero fill, so untouched blocks never become resident.
  keys_ = std::make_unique_for_overwrite<float[]>(n);
  values_ = std::make_unique_for_overwrite<float[]>(n);
}

}  // namespace chaosbench::bench::llm
