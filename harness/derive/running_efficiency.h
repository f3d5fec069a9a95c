// What running costs a training job when nothing fails: productive step time over the wall
// time between consecutive steps of one membership, over the whole run. The goodput
// model's fault-free share (docs/goodput-model.md): a soak's first failure may come
// seconds in, so the stretch before it says little. Pure.
#pragma once

#include <optional>
#include <vector>

#include "harness/derive/train_events.h"

namespace chaosbench::harness {

// Pairs of steps n-1, n computed in the same (attempt, generation), each taken when its
// last rank reported it, with no fault applied and no train_start between them: the sum
// of step n's median step_ms over the sum of the gaps. Nullopt with fewer than 10 pairs.
std::optional<double> running_efficiency(const TrainTimeline& tl, const std::vector<double>& fault_applied_s);

}  // namespace chaosbench::harness
