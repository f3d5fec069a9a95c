// Gradient buckets (gradient_buckets.h).
#include "bench/train/comm/gradient_buckets.h"

#include <algorithm>

namespace chaosbench::bench::train {

std::vector<Bucket> make_buckets(const std::vector<LayerSpan>& spans, std::uint64_t bucket_bytes) {
  std::vector<Bucket> out;
  const std::size_t limit = std::max<std::uint64_t>(bucket_bytes / sizeof(float), 1);
  for (int l = static_cast<int>(spans.size()) - 1; l >= 0; --l) {
    const auto& s = spans[static_cast<std::size_t>(l)];
    if (out.empty() || out.back().count >= limit) {
      out.push_back({l, l, s.offset, s.count});
    } else {  // layers are contiguous, so the lower layer extends the bucket downwards
      auto& b = out.back();
      b.first_layer = l;
      b.offset = s.offset;
      b.count += s.count;
    }
  }
  return out;
}

std::size_t buckets_complete(const std::vector<Bucket>& buckets, std::size_t from, int layer) {
  while (from < buckets.size() && buckets[from].first_layer >= layer) ++from;
  return from;
}

float* place_extras(float* grads, const Bucket& first, std::size_t extras, std::size_t tail,
                    std::vector<float>& staged) {
  if (tail >= extras) return grads + first.offset + first.count;
  staged.resize(first.count + extras);
  return staged.data() + first.count;
}

}  // namespace chaosbench::bench::train
