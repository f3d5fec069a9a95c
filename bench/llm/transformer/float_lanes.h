// The transformer's fp32 loops (linear_layer.cc, transformer_model.cc): how many partial
// sums a dot product keeps, and the CPU versions g++ builds those loops for.
#pragma once

namespace chaosbench::bench::llm {

// Floats of one AVX-512 register. Dot products are summed in this many independent lanes,
// then folded in order: a loop g++ vectorises without reassociating, so the bits do not
// depend on the vector width the CPU runs (one AVX-512 register, or four SSE ones).
inline constexpr int kFloatLanes = 16;

}  // namespace chaosbench::bench::llm

// The loops are built for AVX-512 and for any x86-64; the loader picks one (as
// bench/serve/int8_model.cc does).
#define CHAOSBENCH_LLM_CLONES __attribute__((target_clones("avx512f", "default")))
