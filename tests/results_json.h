// Reading a run's results.json in tests: the document, metric records by name, and the
// overall value of a metric.
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

}  // namespace chaosbench::test
