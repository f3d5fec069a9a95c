// splitmix64 (Steele, Lea & Flood, "Fast splittable pseudorandom number generators",
// OOPSLA 2014): the generator behind every seeded resampling in reports/ (the gate's
// bootstrap, the change-point permutation test). Small, fast, and the same sequence on
// every platform and standard library, so a seed reproduces a verdict anywhere. Not for
// cryptography.
#pragma once

#include <cstddef>
#include <cstdint>

namespace chaosbench::reports {

class SplitMix64 {
 public:
  explicit SplitMix64(std::uint64_t seed) : state_(seed) {}

  std::uint64_t next() {
    std::uint64_t z = (state_ += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
  }

  // An index below n (n > 0), from the top 53 bits as a fraction (no division: resampling
  // loops call it millions of times); the bias is below n / 2^53, far under anything measured.
  std::size_t below(std::size_t n) {
    auto i = static_cast<std::size_t>(static_cast<double>(next() >> 11) * 0x1.0p-53 * static_cast<double>(n));
    return i < n ? i : n - 1;
  }

 private:
  std::uint64_t state_;
};

}  // namespace chaosbench::reports
