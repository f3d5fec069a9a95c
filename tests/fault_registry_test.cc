// The registry as the one place that knows what each fault type does: the driver and the
// launcher read traits from it instead of comparing type names.
#include <catch2/catch.hpp>

#include <map>
#include <string>

#include "faults/registry.h"

using namespace chaosbench::faults;

TEST_CASE("registry: traits say which faults end nodes, OOM-kill, corrupt silently or hang", "[registry]") {
  const std::map<std::string, std::uint32_t> expected = {
      {"node.kill", kNodeGone},           {"node.memory_limit", kOomKills},
      {"gpu.bitflip", kSilentCorruption}, {"gpu.hang", kHangs | kServeReplicaLives},
      {"gpu.oom", kServeReplicaLives},    {"collective.hang", kHangs}};
  for (const auto& info : fault_registry()) {
    INFO(info.type);
    const auto it = expected.find(std::string(info.type));
    CHECK(info.traits == (it == expected.end() ? 0u : it->second));
  }
  CHECK(fault_has_trait("node.kill", kNodeGone));
  CHECK_FALSE(fault_has_trait("rank.kill", kNodeGone));
  CHECK_FALSE(fault_has_trait("no.such.type", kHangs));
}
