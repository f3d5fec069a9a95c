// Sweeps, for tuning: a scenario may declare "sweep", a grid over its own settings —
//   "sweep": { "workload.bucket_size": ["256KiB", "1MiB", "4MiB"], "workload.batch_size": [512, 1024] }
// Each key is a path as --set takes it; each value a non-empty array of JSON values.
// `run` executes every point of the grid (the Cartesian product over the keys in
// alphabetical order, the last varying fastest) with
// the same seed and faults, each as a run of its own; the sweep report compares them.
#pragma once

#include <string>
#include <vector>

namespace chaosbench::harness {

inline constexpr std::size_t kMaxSweepPoints = 64;

struct SweepAxis {
  std::string path;                 // "workload.bucket_size"
  std::vector<std::string> values;  // JSON text of each value: "\"1MiB\"", "512"
};

struct SweepPoint {
  std::vector<std::string> overrides;  // "workload.bucket_size=\"1MiB\"", as --set takes them
  std::string label;                   // "bucket_size=1MiB batch_size=512"
};

// Every point, in grid order (the last axis varies fastest). Empty for no sweep.
std::vector<SweepPoint> sweep_points(const std::vector<SweepAxis>& axes);

}  // namespace chaosbench::harness
