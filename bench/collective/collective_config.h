// What one rank of the collective benchmark runs: the sweep, the iterations and where to
// meet its peers. Built by collective_config() from the workload's settings
// (collective_settings.h, which holds every default) plus who this rank is and where the
// ranks meet; plain data so the benchmark itself never sees a command line.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

#include "bench/collective/collective_settings.h"

namespace chaosbench::bench {

struct CollectiveConfig {
  int rank = 0;
  int world_size = 1;
  // From CollectiveSettings (see there for meanings and defaults), sizes in bytes.
  std::vector<std::string> collectives;
  std::vector<std::string> algorithms;
  std::uint64_t min_bytes = 0;
  std::uint64_t max_bytes = 0;
  std::uint64_t factor = 0;
  int warmup_iters = 0;
  int iters = 0;
  // Above zero: repeat the whole sweep until this long has passed since the first timed
  // iteration. Rank 0's clock decides; every rank learns it in the per-size summary
  // allreduce, so all stop after the same size (no rank is left waiting on the others).
  std::chrono::milliseconds duration{0};
  bool check = true;
  // Rendezvous store, "file:/dir" (gloo FileStore); the prefix separates runs and restarts.
  std::string store = "file:/tmp";
  std::string store_prefix = "chaosbench";
  // Address this rank binds its gloo TCP transport to.
  std::string host = "127.0.0.1";
  std::chrono::milliseconds timeout{0};
};

// The settings' part of a CollectiveConfig (everything but rank, world_size, store,
// store_prefix and host).
CollectiveConfig collective_config(const CollectiveSettings& s);

}  // namespace chaosbench::bench
