#include "bench/load/load_scenario.h"

namespace chaosbench::bench::load {

std::optional<LoadScenario> parse_load_scenario(std::string_view text) {
  if (text == "server") return LoadScenario::kServer;
  if (text == "offline") return LoadScenario::kOffline;
  if (text == "single-stream") return LoadScenario::kSingleStream;
  return std::nullopt;
}

const char* to_string(LoadScenario scenario) {
  switch (scenario) {
    case LoadScenario::kServer: return "server";
    case LoadScenario::kOffline: return "offline";
    case LoadScenario::kSingleStream: return "single-stream";
  }
  return "?";
}

}  // namespace chaosbench::bench::load
