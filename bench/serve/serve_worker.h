// `chaosbench worker serve`: loads the model, serves it over HTTP until SIGTERM/SIGINT and
// forwards infer/batch_size and infer/queue_time to the harness every ~100 ms (from this
// thread alone: MetricsClient is not thread-safe).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "bench/protocol/metrics_client.h"
#include "bench/serve/dynamic_batcher.h"
#include "bench/serve/http_server.h"
#include "bench/serve/serve_settings.h"

namespace chaosbench::bench::serve {

// Built by serve_config() from the workload's settings (serve_settings.h, which holds their
// defaults) plus the worker's own flags.
struct ServeConfig {
  std::string model_name;
  std::vector<int> layers;
  std::string dtype;           // fp32 or int8
  std::string checkpoint_dir;  // empty: seeded random weights
  std::uint64_t seed = 42;
  int blas_threads = 1;
  BatcherConfig batching;
  HttpServerConfig http;
};

// The settings' part of a ServeConfig: model, weights, batching, queue limit and port; the
// rest as ServeConfig{}'s.
ServeConfig serve_config(const ServeSettings& s);

// Upper bounds of the options (each allocates by it: the model's batch buffers, a
// descriptor per connection).
inline constexpr int kMaxBatchSizeLimit = 4096;
inline constexpr long kMaxConnectionsLimit = 65536;

// nullopt when cfg is usable, else why not (for a usage error).
std::optional<std::string> serve_config_error(const ServeConfig& cfg);

inline constexpr int kServeDeviceLost = 3;  // a sticky GPU error ended the replica

// Blocks until SIGTERM or SIGINT (exit code 0), or until a sticky GPU error makes the
// model unusable (kServeDeviceLost, after answering what was queued); returns the exit
// code.
int run_server(const ServeConfig& cfg, MetricsClient& metrics);

}  // namespace chaosbench::bench::serve
