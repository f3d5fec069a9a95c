// The serve workload's settings: what a scenario's workload of kind "serve" sets for its
// replicas, with the one definition of every default. The scenario parser fills it
// (harness/scenario/serve_workload_parser.cc); the launcher encodes it into the
// `chaosbench worker serve` command line and the worker decodes it back. Per-launch values
// (host, seed) and the server's own limits (threads, body and connection limits) are not
// settings: the worker reads them beside these flags.
#pragma once

#include <chrono>
#include <string>
#include <vector>

#include "bench/common/program_options_fwd.h"
#include "common/values/units.h"

namespace chaosbench::bench::serve {

struct ServeSettings {
  // Triton's knobs (dynamic_batcher.h).
  struct Batching {
    int max_batch_size = 64;  // rows per model call
    common::Duration max_queue_delay{std::chrono::microseconds(2000)};  // how long a request waits for a batch
    std::vector<int> preferred_batch_sizes;  // dispatch at once on reaching the largest

    bool operator==(const Batching&) const = default;
  };

  std::string model_name = "mlp";  // in /v2/models/NAME
  std::vector<int> layers{256, 1024, 1024, 1024, 16};  // the trainer's MLP, input width first
  std::string dtype = "fp32";  // "fp32" or "int8" weights
  int port = 8000;             // where a replica listens (the launcher offsets it per replica on one address)
  Batching batching;
  int queue_limit = 1024;      // waiting requests before 503
  std::string checkpoint_dir;  // the trainer's checkpoints; empty: seeded weights

  bool operator==(const ServeSettings&) const = default;
};

// The settings as `chaosbench worker serve` flags ("--model", "mlp", ...); the queue delay
// in whole microseconds; --preferred-batch-sizes and --checkpoint-dir only when not empty.
std::vector<std::string> encode_serve_settings(const ServeSettings& s);

// Declares the settings' flags, with ServeSettings{}'s defaults, on `options`.
void add_serve_settings_flags(boost::program_options::options_description& options);
// Reads them back from a parsed command line; throws std::invalid_argument naming the
// flag ("--layers: expected comma-separated integers, got ...").
ServeSettings read_serve_settings(const boost::program_options::variables_map& vm);
// add + parse + read in one: the settings of a command line made only of these flags.
ServeSettings decode_serve_settings(const std::vector<std::string>& flags);

}  // namespace chaosbench::bench::serve
