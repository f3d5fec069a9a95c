#include "results_json.h"

#include <fstream>

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

std::vector<nlohmann::json> workload_events(const TempDir& dir, const std::string& out, const std::string& name) {
  std::vector<nlohmann::json> found;
  std::ifstream in(dir.file(out + "/timeline.jsonl"));
  for (std::string line; std::getline(in, line);) {
    auto e = nlohmann::json::parse(line);
    if (e["event"] == "workload_event" && e["name"] == name) found.push_back(e);
  }
  return found;
}

std::string train_scenario(int nodes, const std::string& workload_extra, const std::string& faults,
                           const std::string& mode, const std::string& timeout) {
  return R"({"schema_version": 1, "name": "train-test", "cluster": {"nodes": )" + std::to_string(nodes) +
         R"(, "mode": ")" + mode + R"("},
  "workload": {"kind": "train", "model": {"layers": [32, 128, 128, 4]}, "batch_size": 64,
               "optimizer": {"kind": "sgd", "lr": 0.05, "momentum": 0.9}, "bucket_size": "16KiB", "timeout": ")" + timeout + "\"" +
         workload_extra + R"(},
  "faults": )" + faults + "}";
}

}  // namespace chaosbench::test
