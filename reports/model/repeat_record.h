// What a combined results.json (`run --repeat N`) says of the runs it combines: each
// run's id, directory, verdict and timing, and whether they ran interleaved with a
// baseline scenario's runs (`--interleave`).
#pragma once

#include <string>
#include <vector>

#include "reports/model/verdict.h"

namespace chaosbench::reports {

struct RepeatedRun {
  std::string run_id;
  std::string dir;  // relative to the combined result's directory: "run-01"
  Verdict verdict = Verdict::kError;
  std::string reason;
  std::string started_at;
  double duration_s = 0;
};

struct RepeatRecord {
  int count = 0;             // runs asked for
  bool interleaved = false;  // alternated with a baseline scenario's runs
  std::vector<RepeatedRun> runs;
};

}  // namespace chaosbench::reports
