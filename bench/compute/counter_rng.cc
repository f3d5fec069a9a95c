// Box-Muller for counter-based streams. The synthetic data set draws ~130k normals per
// batch, which glibc's scalar logf/cosf/sinf make cost ~1 ms, so the logarithm and the
// trigonometry here are short polynomials in plain loops over a block that g++ vectorises.
// Every lane performs the same scalar operations in the same order, so the values do not
// depend on the vector width (bench/CMakeLists.txt sets -ffp-contract=off, which rules out
// fused multiply-adds): the same bits on every rank.
#include "bench/compute/counter_rng.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <numbers>
#include <stdexcept>

namespace chaosbench::bench::train {
namespace {

constexpr std::size_t kBlock = 64;  // pairs transformed per vectorised pass

// ln(x * 2^-24) for an integer x in [1, 2^24], accurate to a few ulp also near 0 (x near
// 2^24). As fdlibm's logf: split x = 2^e * m with m in [sqrt(1/2), sqrt(2)), then
// ln m = 2 atanh(s) = 2 (s + s^3/3 + s^5/5 + ...), s = (m - 1) / (m + 1), |s| < 0.172, so
// the series through s^9 is exact to 1e-9.
inline float log_scaled(float x) {
  const std::int32_t shifted = std::bit_cast<std::int32_t>(x) - 0x3f3504f3;  // bits of sqrt(1/2)
  const std::int32_t e = shifted >> 23;
  const float m = std::bit_cast<float>((shifted & 0x007fffff) + 0x3f3504f3);
  const float s = (m - 1.0f) / (m + 1.0f);
  const float s2 = s * s;
  const float series = s * (2.0f + s2 * (2.0f / 3 + s2 * (2.0f / 5 + s2 * (2.0f / 7 + s2 * (2.0f / 9)))));
  // <= 0 for every x: e < 24 gives at most -ln 2 + ln sqrt(2); x = 2^24 gives exactly 0.
  return static_cast<float>(e - 24) * std::numbers::ln2_v<float> + series;
}

// Taylor polynomials on [-pi/4, pi/4]; truncation errors below 3e-8. Reciprocals as
// constants: g++ keeps a division by 6 a division, which costs several multiplications.
inline float sin_small(float a) {
  const float a2 = a * a;
  return a * (1.0f - a2 * (1.0f / 6) * (1.0f - a2 * (1.0f / 20) * (1.0f - a2 * (1.0f / 42) * (1.0f - a2 * (1.0f / 72)))));
}
inline float cos_small(float a) {
  const float a2 = a * a;
  return 1.0f - a2 * 0.5f * (1.0f - a2 * (1.0f / 12) * (1.0f - a2 * (1.0f / 30) * (1.0f - a2 * (1.0f / 56))));
}

// Normals 2p and 2p+1 for `count` consecutive pairs into the interleaved out[0..2*count).
void transform_block(std::uint64_t key, std::uint64_t first_pair, std::size_t count, float stddev, float* out) {
  // The scalar loop only hashes (64-bit multiplies do not vectorise on baseline x86-64);
  // the vector loop unpacks 24 bits for the radius (k1 in 1..2^24, so the logarithm is
  // finite), 2 quadrant bits and 22 bits of angle within the quadrant.
  std::uint32_t high[kBlock], low[kBlock];
  for (std::size_t p = 0; p < count; ++p) {
    const std::uint64_t bits = random_bits(key, first_pair + p);
    high[p] = static_cast<std::uint32_t>(bits >> 32);
    low[p] = static_cast<std::uint32_t>(bits);
  }
  float re[kBlock], im[kBlock];
  for (std::size_t p = 0; p < count; ++p) {
    const float k1 = static_cast<float>(static_cast<std::int32_t>(high[p] >> 8) + 1);
    const float frac = static_cast<float>(static_cast<std::int32_t>(low[p] & 0x3fffff)) * (1.0f / 4194304.0f);
    // The quadrant rotation multiplies by 0 and 1 instead of branching, so that the loop
    // vectorises; c * 1 - s * 0 is exactly c.
    const float odd = static_cast<float>(static_cast<std::int32_t>((low[p] >> 22) & 1));
    const float even = 1.0f - odd;
    const float sign = 1.0f - 2.0f * static_cast<float>(static_cast<std::int32_t>((low[p] >> 23) & 1));
    const float r = sign * stddev * std::sqrt(-2.0f * log_scaled(k1));
    // The angle is a + quadrant * pi/2 with a uniform in [-pi/4, pi/4): uniform on the
    // circle. Quadrant 1 maps (c, s) to (-s, c); quadrant 2 negates (the sign above).
    const float a = (frac - 0.5f) * (std::numbers::pi_v<float> / 2);
    const float c = cos_small(a), s = sin_small(a);
    re[p] = r * (c * even - s * odd);
    im[p] = r * (c * odd + s * even);
  }
  for (std::size_t p = 0; p < count; ++p) {
    out[2 * p] = re[p];
    out[2 * p + 1] = im[p];
  }
}

}  // namespace

void fill_normal(std::uint64_t key, std::uint64_t first, float* out, std::size_t n, float stddev) {
  if (first % 2 != 0) throw std::invalid_argument("fill_normal: first must be even");
  const std::uint64_t first_pair = first / 2;
  const std::size_t whole_pairs = n / 2;
  for (std::size_t p = 0; p < whole_pairs; p += kBlock) {
    transform_block(key, first_pair + p, std::min(kBlock, whole_pairs - p), stddev, out + 2 * p);
  }
  if (n % 2 != 0) {  // the odd last element: the first half of one more pair
    float pair[2];
    transform_block(key, first_pair + whole_pairs, 1, stddev, pair);
    out[n - 1] = pair[0];
  }
}

}  // namespace chaosbench::bench::train
