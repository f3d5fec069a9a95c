// A scenario's link mesh (docs/scenario-format.md "mesh"): the all-pairs prober that
// measures every pair of nodes' round-trip time and loss during the run, on by default.
#pragma once

#include <chrono>

#include "common/values/units.h"

namespace chaosbench::harness {

struct MeshSpec {
  bool enabled = true;
  // Probes each node sends each other node per second: a budget of rate x N x (N - 1)
  // small UDP datagrams a second in all (and as many echoes).
  double rate = 10;
  // One net/pair_rtt and net/pair_loss sample per pair per window.
  common::Duration window{std::chrono::seconds(1)};
};

}  // namespace chaosbench::harness
