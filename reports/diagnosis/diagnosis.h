// Blind fault localisation: what the diagnosis names from a run's measurements alone, and
// why (docs/diagnosis.md). It reads series (the link mesh's net/pair_rtt and
// net/pair_loss, the nodes' node/cpu_wait and node/cpu_usage, the ranks'
// train/compute_time) and never a fault list, phase or schedule.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "common/values/labels.h"

namespace chaosbench::reports {

// One measured fact behind a culprit: a series at the culprit's worst window, against the
// run's own baseline of that series and against its peers at the same time.
struct DiagnosisEvidence {
  std::string series;    // "net/pair_rtt"
  common::Labels labels;  // {"src": "node0", "dst": "node3"}
  double t = 0;          // the window's end, seconds since the workload started
  double value = 0;
  double baseline = 0;   // the series' median over its normal windows
  double peers = 0;      // the median of its peers in the same window
  double sigmas = 0;     // (value - baseline) / the baseline's robust spread
  std::string text;      // one line a person reads
};

struct DiagnosisCulprit {
  std::string cls;        // "node", "link", "nic", "gpu"
  std::string component;  // "node2", "node0-node3" (lower first), "node1" (its NIC), "rank2"
  std::string what;       // "CPU starved", "slow link", "lossy link", "slow NIC", "slow device"
  double start_s = 0;     // the first abnormal window's start
  double end_s = 0;       // the last abnormal window's end
  double first_named_s = 0;  // when a live diagnosis would first have named it
  double confidence = 0;     // 0..1
  std::vector<DiagnosisEvidence> evidence;
};

struct Diagnosis {
  std::vector<DiagnosisCulprit> culprits;  // most confident first; empty: nothing stands out
  double window_s = 1;
  int windows = 0;                  // windows judged
  std::vector<std::string> inputs;  // the series kinds it had ("link mesh", "node telemetry", "rank compute")
  std::vector<std::string> notes;   // what it could not judge, and why
};

}  // namespace chaosbench::reports
