// Reads a scenario file into a validated Scenario value. Every problem is a ScenarioError
// holding all diagnostics found (file, line:column or --set origin, JSON path, what was
// expected). Bad input of any kind (truncated, binary, huge, deeply nested) is an error
// within milliseconds, never a crash.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "harness/scenario/diagnostic.h"
#include "harness/scenario/scenario.h"

namespace chaosbench::harness {

inline constexpr std::size_t kMaxScenarioBytes = 4u << 20;  // 4 MiB: scenarios are small
inline constexpr std::size_t kMaxScenarioDepth = 64;

struct LoadOptions {
  std::vector<std::string> overrides;  // --set KEY=VALUE, in order
  std::optional<std::uint64_t> seed;   // --seed, over the file's seed
  bool no_sweep = false;               // a sweep's points are not checked again (internal)
};

struct LoadResult {
  Scenario scenario;
  std::vector<Diagnostic> warnings;
};

// Throws ScenarioError. `file` is how messages name the file.
LoadResult load_scenario(const std::string& file, const LoadOptions& options = {});
// The file's text, for parse_scenario (a sweep parses it once per point without reading
// it again). Throws ScenarioError: missing, neither a regular file nor a pipe (`<(...)`),
// over kMaxScenarioBytes.
// An inventory file (cluster.hosts as a path): an array of hosts, or an object whose
// "hosts" is one. Throws ScenarioError naming the file, JSON path and line:column.
std::vector<HostSpec> load_inventory(const std::string& file);

std::string read_scenario_file(const std::string& file);
LoadResult parse_scenario(std::string_view text, const std::string& file, const LoadOptions& options = {});

}  // namespace chaosbench::harness
