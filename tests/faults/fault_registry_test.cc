// The registry as the one place that knows what each fault type does: the driver and the
// launcher read traits from it instead of comparing type names; its declared defaults
// parse; restart_after is declared for the types that take it.
#include <catch2/catch.hpp>

#include <map>
#include <set>
#include <string>

#include "faults/registry/registry.h"

namespace fault_registry_test {  // this file's names, apart in a unity batch (tests/CMakeLists.txt)

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

TEST_CASE("registry: every declared default parses, and defaults_of sets exactly those", "[registry]") {
  for (const auto& info : fault_registry()) {
    INFO(info.type);
    Params defaults;
    REQUIRE_NOTHROW(defaults = defaults_of(info.params));
    std::size_t with_default = 0;
    for (const auto& p : info.params) {
      CHECK(defaults.has(p.name) == !p.default_text.empty());
      with_default += p.default_text.empty() ? 0 : 1;
    }
    CHECK(defaults.values().size() == with_default);
  }
}

TEST_CASE("registry: restart_after is declared, last, for the types that bring ended ranks back", "[registry]") {
  const std::set<std::string> restartable = {"node.kill", "rank.kill", "gpu.xid", "gpu.oom", "gpu.hang",
                                             "collective.hang"};
  for (const auto& info : fault_registry()) {
    INFO(info.type);
    const auto declared = declared_params(info);
    const bool takes = restartable.count(std::string(info.type)) > 0;
    CHECK(info.restart_after.empty() != takes);
    CHECK(declared.size() == info.params.size() + (takes ? 1 : 0));
    for (const auto& p : info.params) CHECK(p.name != "restart_after");  // an envelope key, not a parameter
    if (!takes) continue;
    REQUIRE_FALSE(declared.empty());
    CHECK(declared.back().name == "restart_after");
    CHECK(declared.back().kind == ParamKind::kDuration);
    CHECK_FALSE(declared.back().required);
  }
}

}  // namespace fault_registry_test
