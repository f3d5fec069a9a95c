// The checkpoint row of the micro-benchmark suite: ckpt/write_bw of the trainer's
// CheckpointWriter, synchronous full checkpoints (zstd level 1) of 64 MiB of random
// floats into a fresh directory under `dir` (the run directory, so the disk measured is
// the one runs write to), removed afterwards. As the trainer reports it: bytes on disk /
// write time (encode + write + fsync + rename), GB = 10^9 bytes.
#pragma once

#include <string>
#include <vector>

#include "bench/micro/micro_benchmark.h"

namespace chaosbench::bench::micro {

std::vector<MicroBenchmark> checkpoint_benchmarks(const std::string& dir);

}  // namespace chaosbench::bench::micro
