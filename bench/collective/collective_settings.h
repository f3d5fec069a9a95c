// The collective workload's settings: what a scenario's workload of kind "collective" may
// set, with the one definition of every default. The scenario parser fills it
// (harness/scenario/workload_parser.cc); the launcher encodes it into the
// `chaosbench worker collective` command line and the worker decodes it back. Per-launch
// values (store, prefix, host) are not settings: the launcher adds them.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

#include "bench/common/program_options_fwd.h"
#include "common/values/units.h"

namespace chaosbench::bench {

struct CollectiveSettings {
  std::string backend = "gloo";  // the only one; the scenario may name it (no worker flag)
  // Collectives in run order, names from collective_table() ("allreduce", ...).
  std::vector<std::string> collectives{"allreduce"};
  // Allreduce algorithms to run ("ring", "halving_doubling"); other collectives use the
  // algorithm gloo has for them.
  std::vector<std::string> algorithms{"ring"};
  common::Size min_size{1024};
  common::Size max_size{16u << 20};
  std::uint64_t factor = 2;  // size sweep: min, min*factor, ... <= max
  int warmup_iters = 5;
  int iters = 20;
  common::Duration duration{};  // zero: the sweep once; else repeated until this long has passed
  bool check = true;            // check every result element against its expected value
  common::Duration timeout{std::chrono::seconds(30)};  // gloo operation timeout

  bool operator==(const CollectiveSettings&) const = default;
};

// The settings as `chaosbench worker collective` flags ("--collectives", "allreduce", ...);
// durations in whole milliseconds.
std::vector<std::string> encode_collective_settings(const CollectiveSettings& s);

// Declares the settings' flags, with CollectiveSettings{}'s defaults, on `options`.
void add_collective_settings_flags(boost::program_options::options_description& options);
// Reads them back from a parsed command line; throws std::invalid_argument naming the
// flag ("--min-size: ...") for a size that does not parse. A negative duration is zero.
CollectiveSettings read_collective_settings(const boost::program_options::variables_map& vm);
// add + parse + read in one: the settings of a command line made only of these flags.
CollectiveSettings decode_collective_settings(const std::vector<std::string>& flags);

}  // namespace chaosbench::bench
