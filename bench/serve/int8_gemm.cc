// The VNNI kernel is register-blocked: a tile of kRows rows x kBlocks 16-channel blocks
// keeps kRows*kBlocks int32 accumulators (24 of the 32 zmm registers) over the whole k
// loop; per k-group it loads kBlocks weight vectors and broadcasts 4 bytes of each row, so
// every load feeds several vpdpbusd. Tiles walk the rows inside a panel of channels, so
// the panel's weights (<= 64 channels x k bytes) stay in L2 across all the rows.
// Only the kernel carries the AVX-512 target attribute; the rest of the file is built for
// the baseline, and vnni_available() decides at run time.
#include "bench/serve/int8_gemm.h"

#include <immintrin.h>

#include <algorithm>
#include <array>
#include <cstring>
#include <stdexcept>
#include <string>
#include <utility>

namespace chaosbench::bench::serve {
namespace {

constexpr int kLanes = 16;                      // int32 lanes of a zmm register = channels per block
constexpr int kGroup = 4;                       // k values per lane per vpdpbusd
constexpr int kGroupBytes = kLanes * kGroup;    // one k-group of one block
constexpr int kRows = 6;                        // rows per tile
constexpr int kBlocks = 4;                      // 16-channel blocks per tile

#define CHAOSBENCH_VNNI_TARGET __attribute__((target("avx512f,avx512bw,avx512vnni")))

// c[rows x blocks*16] = a x w for one tile; the last block stores only `last_lanes`.
template <int Rows, int Blocks>
CHAOSBENCH_VNNI_TARGET void vnni_tile(const std::uint8_t* a, int lda, const std::int8_t* w, std::size_t block_stride,
                                      int groups, std::int32_t* c, int ldc, int last_lanes) {
  __m512i acc[Rows][Blocks];
#pragma GCC unroll 8
  for (int r = 0; r < Rows; ++r) {
#pragma GCC unroll 8
    for (int b = 0; b < Blocks; ++b) acc[r][b] = _mm512_setzero_si512();
  }
  for (int g = 0; g < groups; ++g) {
    __m512i wv[Blocks];
#pragma GCC unroll 8
    for (int b = 0; b < Blocks; ++b) {
      wv[b] = _mm512_loadu_si512(w + static_cast<std::size_t>(b) * block_stride + static_cast<std::size_t>(g) * kGroupBytes);
    }
#pragma GCC unroll 8
    for (int r = 0; r < Rows; ++r) {
      std::int32_t four;
      std::memcpy(&four, a + static_cast<std::size_t>(r) * lda + static_cast<std::size_t>(g) * kGroup, sizeof four);
      const __m512i av = _mm512_set1_epi32(four);
#pragma GCC unroll 8
      for (int b = 0; b < Blocks; ++b) acc[r][b] = _mm512_dpbusd_epi32(acc[r][b], av, wv[b]);
    }
  }
  const auto last_mask = static_cast<__mmask16>((1u << last_lanes) - 1u);
#pragma GCC unroll 8
  for (int r = 0; r < Rows; ++r) {
    std::int32_t* row = c + static_cast<std::size_t>(r) * ldc;
#pragma GCC unroll 8
    for (int b = 0; b < Blocks; ++b) {
      if (b + 1 < Blocks || last_lanes == kLanes) {
        _mm512_storeu_si512(row + b * kLanes, acc[r][b]);
      } else {
        _mm512_mask_storeu_epi32(row + b * kLanes, last_mask, acc[r][b]);
      }
    }
  }
}

using TileFn = void (*)(const std::uint8_t*, int, const std::int8_t*, std::size_t, int, std::int32_t*, int, int);

// kTiles[rows-1][blocks-1]: one instantiation per edge shape.
template <int R, int... B>
constexpr std::array<TileFn, kBlocks> tile_row(std::integer_sequence<int, B...>) {
  return {&vnni_tile<R, B + 1>...};
}
template <int... R>
constexpr std::array<std::array<TileFn, kBlocks>, kRows> tile_table(std::integer_sequence<int, R...>) {
  return {tile_row<R + 1>(std::make_integer_sequence<int, kBlocks>{})...};
}
constexpr auto kTiles = tile_table(std::make_integer_sequence<int, kRows>{});

void vnni_gemm(const std::uint8_t* a, int m, int lda, const PackedInt8Weights& w, std::int32_t* c, int ldc) {
  const int groups = w.k_padded / kGroup;
  const std::size_t block_stride = static_cast<std::size_t>(groups) * kGroupBytes;
  for (int b0 = 0; b0 < w.n_blocks; b0 += kBlocks) {
    const int blocks = std::min(kBlocks, w.n_blocks - b0);
    const int last_lanes = std::min(kLanes, w.n - (b0 + blocks - 1) * kLanes);
    const std::int8_t* panel = w.data.data() + static_cast<std::size_t>(b0) * block_stride;
    for (int r0 = 0; r0 < m; r0 += kRows) {
      const int rows = std::min(kRows, m - r0);
      kTiles[rows - 1][blocks - 1](a + static_cast<std::size_t>(r0) * lda, lda, panel, block_stride, groups,
                                   c + static_cast<std::size_t>(r0) * ldc + b0 * kLanes, ldc, last_lanes);
    }
  }
}

// The same products in plain C++, block by block over the packed layout.
void portable_gemm(const std::uint8_t* a, int m, int lda, const PackedInt8Weights& w, std::int32_t* c, int ldc) {
  const int groups = w.k_padded / kGroup;
  for (int r = 0; r < m; ++r) {
    const std::uint8_t* row = a + static_cast<std::size_t>(r) * lda;
    for (int b = 0; b < w.n_blocks; ++b) {
      const std::int8_t* block = w.data.data() + static_cast<std::size_t>(b) * groups * kGroupBytes;
      std::array<std::int32_t, kLanes> acc{};
      for (int g = 0; g < groups; ++g) {
        const std::uint8_t* av = row + static_cast<std::size_t>(g) * kGroup;
        const std::int8_t* wv = block + static_cast<std::size_t>(g) * kGroupBytes;
        for (int lane = 0; lane < kLanes; ++lane) {
          std::int32_t sum = 0;
          for (int j = 0; j < kGroup; ++j) sum += static_cast<std::int32_t>(av[j]) * wv[lane * kGroup + j];
          acc[lane] += sum;
        }
      }
      const int lanes = std::min(kLanes, w.n - b * kLanes);
      std::copy_n(acc.begin(), lanes, c + static_cast<std::size_t>(r) * ldc + b * kLanes);
    }
  }
}

}  // namespace

bool vnni_available() {
  __builtin_cpu_init();
  return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
         __builtin_cpu_supports("avx512vnni");
}

PackedInt8Weights pack_int8_weights(const std::int8_t* w, int n, int k) {
  if (n < 1 || k < 1) {
    throw std::invalid_argument("pack_int8_weights: shape " + std::to_string(n) + "x" + std::to_string(k));
  }
  PackedInt8Weights p;
  p.n = n;
  p.k = k;
  p.k_padded = int8_padded_k(k);
  p.n_blocks = (n + kLanes - 1) / kLanes;
  const int groups = p.k_padded / kGroup;
  p.data.assign(static_cast<std::size_t>(p.n_blocks) * groups * kGroupBytes, 0);
  p.sums.assign(static_cast<std::size_t>(n), 0);
  for (int ch = 0; ch < n; ++ch) {
    const std::int8_t* src = w + static_cast<std::size_t>(ch) * k;
    std::int8_t* block = p.data.data() + static_cast<std::size_t>(ch / kLanes) * groups * kGroupBytes;
    const int lane = ch % kLanes;
    for (int i = 0; i < k; ++i) {
      block[static_cast<std::size_t>(i / kGroup) * kGroupBytes + lane * kGroup + i % kGroup] = src[i];
      p.sums[ch] += src[i];
    }
  }
  return p;
}

void int8_gemm(const std::uint8_t* a, int m, int lda, const PackedInt8Weights& w, std::int32_t* c, int ldc,
               Int8Path path) {
  if (m < 0 || lda < w.k_padded || ldc < w.n) {
    throw std::invalid_argument("int8_gemm: m " + std::to_string(m) + ", lda " + std::to_string(lda) + " (needs " +
                                std::to_string(w.k_padded) + "), ldc " + std::to_string(ldc) + " (needs " +
                                std::to_string(w.n) + ")");
  }
  static const bool have_vnni = vnni_available();
  if (path == Int8Path::kAuto) path = have_vnni ? Int8Path::kVnni : Int8Path::kPortable;
  if (path == Int8Path::kVnni && !have_vnni) throw std::invalid_argument("int8_gemm: this CPU has no AVX-512 VNNI");
  if (path == Int8Path::kVnni) {
    vnni_gemm(a, m, lda, w, c, ldc);
  } else {
    portable_gemm(a, m, lda, w, c, ldc);
  }
}

}  // namespace chaosbench::bench::serve
