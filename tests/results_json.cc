#include "results_json.h"

namespace chaosbench::test {

nlohmann::json read_results(const TempDir& dir, const std::string& out) {
  return nlohmann::json::parse(read_file(dir.file(out + "/results.json")));
}

std::vector<nlohmann::json> metrics_named(const nlohmann::json& results, const std::string& name) {
  std::vector<nlohmann::json> out;
  for (const auto& m : results["metrics"])
    if (m["name"] == name) out.push_back(m);
  return out;
}

std::optional<double> overall_value(const nlohmann::json& results, const std::string& name) {
  for (const auto& m : metrics_named(results, name))
    if (m["labels"]["phase"] == "overall") return m["value"].get<double>();
  return std::nullopt;
}

}  // namespace chaosbench::test
