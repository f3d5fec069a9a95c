#include "reports/history/history_entry.h"

#include <nlohmann/json.hpp>
#include <stdexcept>

#include "reports/gate/gate_selection.h"
#include "reports/model/json_io.h"

namespace chaosbench::reports {

HistoryEntry history_entry_of(const RunResult& run) {
  HistoryEntry e{run.run_id, run.started_at, run.tool_version, run.environment, {}, 0};
  for (const auto& r : run.metrics)
    if (gated(r)) e.records.push_back(r);
  return e;
}

std::string history_line(const HistoryEntry& entry) {
  // The environment and the records through results.json's writer (NaN as null, labels
  // with their types), then cut down to the keys a history needs.
  RunResult holder;
  holder.environment = entry.environment;
  holder.metrics = entry.records;
  const auto doc = nlohmann::ordered_json::parse(to_json(holder, -1));
  nlohmann::ordered_json environment = doc.at("environment");
  // What says where a run ran but not what it ran on: long, and never compared.
  for (const char* key : {"blas", "hosts", "backends", "cluster"}) environment.erase(key);
  nlohmann::ordered_json line;
  line["schema_version"] = doc.at("schema_version");
  line["tool"] = {{"name", holder.tool_name}, {"version", entry.tool_version}};
  line["run_id"] = entry.run_id;
  line["started_at"] = entry.started_at;
  line["environment"] = std::move(environment);
  line["metrics"] = doc.at("metrics");
  return line.dump(-1, ' ', false, nlohmann::ordered_json::error_handler_t::replace);
}

HistoryEntry parse_history_line(const std::string& line) {
  const RunResult run = from_json(line);
  if (run.run_id.empty()) throw std::runtime_error("no run_id");
  return history_entry_of(run);
}

}  // namespace chaosbench::reports
