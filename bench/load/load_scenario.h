// The load's scenario (MLPerf LoadGen's names): how requests are issued. The words are the
// scenario file's and the `--scenario` flag's.
#pragma once

#include <optional>
#include <string_view>

namespace chaosbench::bench::load {

enum class LoadScenario {
  kServer,        // open loop: Poisson arrivals at `qps` for `duration`
  kOffline,       // maximum throughput: every connection keeps one request in flight
  kSingleStream,  // one request at a time, the next when the previous finishes
};

// "server", "offline" or "single-stream"; nullopt for anything else.
std::optional<LoadScenario> parse_load_scenario(std::string_view text);
const char* to_string(LoadScenario scenario);

}  // namespace chaosbench::bench::load
