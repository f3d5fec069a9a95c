#include "bench/train/replica_check.h"

#include <algorithm>
#include <cmath>
#include <map>

#include <xxhash.h>

namespace chaosbench::bench::train {
namespace {

constexpr int kChunkBits[kFingerprintFloats] = {22, 21, 21};

}  // namespace

std::uint64_t replica_fingerprint(Device& device, const float* params, const float* grads, std::size_t n,
                                  std::vector<float>& scratch) {
  XXH3_state_t* state = XXH3_createState();
  XXH3_64bits_reset(state);
  for (const float* buffer : {params, grads}) {
    const float* host = device.host_view(buffer);
    if (!host) {
      scratch.resize(n);
      device.to_host(scratch.data(), buffer, n);
      host = scratch.data();
    }
    XXH3_64bits_update(state, host, n * sizeof(float));
  }
  const std::uint64_t h = XXH3_64bits_digest(state);
  XXH3_freeState(state);
  return h;
}

void put_fingerprint(std::vector<float>& extras, std::size_t base, int index, std::uint64_t fp) {
  std::size_t at = base + static_cast<std::size_t>(index) * kFingerprintFloats;
  for (int bits : kChunkBits) {
    extras.at(at++) = static_cast<float>((fp & ((1ull << bits) - 1)) + 1);
    fp >>= bits;
  }
}

ReplicaVerdict compare_fingerprints(const std::vector<float>& extras, std::size_t base, int members) {
  ReplicaVerdict v;
  std::map<std::uint64_t, std::vector<int>> by_hash;
  for (int m = 0; m < members; ++m) {
    std::uint64_t fp = 0;
    int shift = 0;
    for (std::size_t c = 0; c < kFingerprintFloats; ++c) {
      const float x = extras.at(base + static_cast<std::size_t>(m) * kFingerprintFloats + c);
      if (x < 0.5f) return v;  // this member sent none (it just started or recovered)
      fp |= (static_cast<std::uint64_t>(std::lround(x)) - 1) << shift;
      shift += kChunkBits[c];
    }
    by_hash[fp].push_back(m);
  }
  v.complete = true;
  v.agree = by_hash.size() <= 1;
  if (v.agree) return v;
  std::size_t best = 0, ties = 0;
  for (const auto& [fp, who] : by_hash) {
    if (who.size() > best) {
      best = who.size();
      ties = 1;
      v.majority = who;
    } else if (who.size() == best) {
      ++ties;
    }
  }
  for (int m = 0; m < members; ++m)
    if (std::find(v.majority.begin(), v.majority.end(), m) == v.majority.end()) v.minority.push_back(m);
  v.strict_majority = ties == 1 && best * 2 > static_cast<std::size_t>(members);
  return v;
}

}  // namespace chaosbench::bench::train
