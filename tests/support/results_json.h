// Reading a run's results.json in tests: the document, metric records by name, the
// overall value of a metric, a workload's events from timeline.jsonl; and the small
// training scenario the end-to-end trainer tests start from.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "test_util.h"

namespace chaosbench::test {

// <dir>/<out>/results.json, parsed.
nlohmann::json read_results(const TempDir& dir, const std::string& out = "out");
std::vector<nlohmann::json> metrics_named(const nlohmann::json& results, const std::string& name);
// The value of the first record of `name` in phase "overall", if any.
std::optional<double> overall_value(const nlohmann::json& results, const std::string& name);
// Workload events of one name from <dir>/<out>/timeline.jsonl.
std::vector<nlohmann::json> workload_events(const TempDir& dir, const std::string& out, const std::string& name);
// A small train scenario (MLP 32-128-128-4, global batch 64): `workload_extra` is spliced
// into the workload object (", \"steps\": 60"), `faults` is the faults array.
std::string train_scenario(int nodes, const std::string& workload_extra, const std::string& faults = "[]",
                           const std::string& mode = "auto", const std::string& timeout = "5s");

}  // namespace chaosbench::test
