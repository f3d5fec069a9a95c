// Counter-based random numbers for the trainer's initialisation and synthetic data: value k
// of a stream is a pure function of (stream key, k), so any rank (or thread) regenerates any
// part of a stream without producing what comes before it. Not for cryptography.
#pragma once

#include <cstddef>
#include <cstdint>

namespace chaosbench::bench::train {

// The splitmix64 output function (Steele, Lea & Flood, "Fast splittable pseudorandom number
// generators", OOPSLA 2014): a bijective 64-bit mixer whose outputs for consecutive
// inputs pass BigCrush.
constexpr std::uint64_t mix64(std::uint64_t z) {
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

// The key of stream `stream` under `seed`: distinct streams (weights of layer 3, inputs,
// noise...) of one seed are unrelated, and so are the same stream under two seeds.
constexpr std::uint64_t stream_key(std::uint64_t seed, std::uint64_t stream) {
  return mix64(mix64(seed + 0x9e3779b97f4a7c15ULL) ^ (stream * 0xd1b54a32d192ed03ULL));
}

// 64 random bits: element k of stream `key` (splitmix64's k-th output from state `key`).
constexpr std::uint64_t random_bits(std::uint64_t key, std::uint64_t k) {
  return mix64(key + (k + 1) * 0x9e3779b97f4a7c15ULL);
}

// Standard normals, Box-Muller over 24-bit uniforms (so |value| <= 5.8): element j of
// out is normal number first + j of stream `key`, times `stddev`. Normals come in pairs
// (2p, 2p+1 share random_bits(key, p)), so `first` must be even; n may be odd.
void fill_normal(std::uint64_t key, std::uint64_t first, float* out, std::size_t n, float stddev);

}  // namespace chaosbench::bench::train
