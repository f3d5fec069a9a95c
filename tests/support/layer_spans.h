// Layer spans for the gradient-communication tests: consecutive layers of the given
// float counts, as MlpModel lays them out.
#pragma once

#include <cstddef>
#include <vector>

#include "bench/compute/mlp_model.h"

namespace chaosbench::test {

inline std::vector<bench::train::LayerSpan> spans_of(const std::vector<std::size_t>& counts) {
  std::vector<bench::train::LayerSpan> out;
  std::size_t offset = 0;
  for (auto c : counts) {
    out.push_back({offset, c});
    offset += c;
  }
  return out;
}

}  // namespace chaosbench::test
