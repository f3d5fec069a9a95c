// What one rank of the collective benchmark runs: the sweep, the iterations and where to
// meet its peers. Filled by `chaosbench worker collective` from its flags and environment;
// plain data so the benchmark itself never sees a command line.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

namespace chaosbench::bench {

struct CollectiveConfig {
  int rank = 0;
  int world_size = 1;
  // Collectives in run order, names from collective_table() ("allreduce", ...).
  std::vector<std::string> collectives{"allreduce"};
  // Allreduce algorithms to run ("ring", "halving_doubling"); other collectives use the
  // algorithm gloo has for them.
  std::vector<std::string> algorithms{"ring"};
  std::uint64_t min_bytes = 1024;
  std::uint64_t max_bytes = 16u << 20;
  std::uint64_t factor = 2;  // size sweep: min, min*factor, ... <= max
  int warmup_iters = 5;
  int iters = 20;
  // Above zero: repeat the whole sweep until this long has passed since the first timed
  // iteration. Rank 0's clock decides; every rank learns it in the per-size summary
  // allreduce, so all stop after the same size (no rank is left waiting on the others).
  std::chrono::milliseconds duration{0};
  bool check = true;  // check every result element against its expected value
  // Rendezvous store, "file:/dir" (gloo FileStore); the prefix separates runs and restarts.
  std::string store = "file:/tmp";
  std::string store_prefix = "chaosbench";
  // Address this rank binds its gloo TCP transport to.
  std::string host = "127.0.0.1";
  std::chrono::milliseconds timeout{30000};
};

}  // namespace chaosbench::bench
