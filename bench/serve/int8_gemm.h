// The int8 GEMM of the int8 inference model: C[m x n] (int32) = A[m x k] (uint8) x W^T,
// W [n x k] int8 (row c = output channel c), exact int32 accumulation. W is packed once
// into the layout the AVX-512 VNNI kernel reads: blocks of 16 channels, and inside a block
// groups of 4 consecutive k values per channel, so one 64-byte load is one k-group of 16
// channels (one int32 lane per channel) and _mm512_dpbusd_epi32 adds 4 products per lane.
// Without VNNI (checked at run time) a portable loop over the same packed layout gives the
// same int32 results bit for bit.
// Threads: packed weights are immutable after packing; gemm calls may run concurrently.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace chaosbench::bench::serve {

enum class Int8Path {
  kAuto,      // VNNI when the CPU has it, else portable
  kVnni,      // AVX-512 VNNI kernel; the caller made sure vnni_available()
  kPortable,  // plain C++ loops
};

// True when this CPU runs AVX-512 F/BW/VNNI code.
bool vnni_available();

struct PackedInt8Weights {
  int n = 0;                       // output channels
  int k = 0;                       // inputs
  int k_padded = 0;                // k rounded up to a multiple of 4; A rows must have this many bytes
  int n_blocks = 0;                // ceil(n / 16)
  std::vector<std::int8_t> data;   // [n_blocks][k_padded/4][16 channels][4 k values], zero padding
  std::vector<std::int32_t> sums;  // per channel: sum over k of W[c][k] (zero-point correction)
};

// Rounds k up to what a packed A row must hold (the bytes past k are ignored: W is zero there).
inline int int8_padded_k(int k) { return (k + 3) / 4 * 4; }

// w: [n x k] row-major.
PackedInt8Weights pack_int8_weights(const std::int8_t* w, int n, int k);

// a: m rows of w.k_padded bytes at stride lda (>= w.k_padded); c: m rows of w.n int32 at
// stride ldc (>= w.n). Overwrites c.
void int8_gemm(const std::uint8_t* a, int m, int lda, const PackedInt8Weights& w, std::int32_t* c, int ldc,
               Int8Path path = Int8Path::kAuto);

}  // namespace chaosbench::bench::serve
