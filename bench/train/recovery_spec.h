// A workload's recovery settings (the scenario's workload.recovery): the mode a rank is
// told, and the limits the harness's run driver keeps. The train workload holds one; the
// command workload reuses it (mode none or restart).
#pragma once

#include <chrono>
#include <optional>

#include "bench/train/recovery_mode.h"
#include "common/values/units.h"

namespace chaosbench::bench::train {

struct RecoverySpec {
  RecoveryMode mode = RecoveryMode::kNone;
  int max_restarts = 3;
  std::optional<int> min_nodes;  // restart on fewer nodes, down to this many; unset: all
  // No step from any rank for this long: hung.
  common::Duration hang_timeout{std::chrono::seconds(60)};

  bool operator==(const RecoverySpec&) const = default;
};

}  // namespace chaosbench::bench::train
