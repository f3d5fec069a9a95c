// Silent data corruption (gpu.bitflip, or a real one) shows as replicas that disagree:
// after every optimizer step each data-parallel rank must hold the same parameters and
// the same reduced gradients, bit for bit. Each rank hashes both (XXH3-64) and sends the
// hash with the next step's first gradient bucket, at a slot of its own among the extras
// (an allgather inside the allreduce: the others' slots are zero), so the check costs no
// extra round trip; every rank sees every hash and reaches the same verdict. A flip is
// therefore caught at the next step, before that step's update is applied. When the
// ranks disagree, a strict majority names the good state and its first member sends it
// to the rest; without a majority (two ranks, or a tie) nothing can say which is right.
// A flip in a rank's own gradients before the allreduce is summed into every replica,
// which then agree: no replica check can see it (docs/gpu-faults.md).
// Pure functions; no threads.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "bench/compute/device.h"

namespace chaosbench::bench::train {

// Floats one hash takes among the extras: 64 bits in chunks of 22, 21 and 21, each plus
// one (so 0 means "no hash this step"), all below 2^24 and so exact in a float sum.
inline constexpr std::size_t kFingerprintFloats = 3;

// XXH3-64 of params and grads (n floats each). `scratch` holds host copies when the
// device's buffers are not host memory.
std::uint64_t replica_fingerprint(Device& device, const float* params, const float* grads, std::size_t n,
                                  std::vector<float>& scratch);

// Writes `fp` into slot `index` of the fingerprint area starting at extras[base].
void put_fingerprint(std::vector<float>& extras, std::size_t base, int index, std::uint64_t fp);

struct ReplicaVerdict {
  bool complete = false;       // every member sent a hash
  bool agree = true;           // all equal (or not complete)
  std::vector<int> majority;   // member indices holding the most common hash
  std::vector<int> minority;   // the others
  bool strict_majority = false;  // majority.size() > members / 2 and unique
};

// Reads `members` slots of the summed extras.
ReplicaVerdict compare_fingerprints(const std::vector<float>& extras, std::size_t base, int members);

}  // namespace chaosbench::bench::train
