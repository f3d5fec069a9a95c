// `history gate --json` and `history show --json` (docs/history.md "JSON"): the gate's
// rows and the trends as JSON objects, numbers that are not finite as null. Pure.
#pragma once

#include <nlohmann/json_fwd.hpp>
#include <string>
#include <vector>

#include "reports/history/history_gate.h"
#include "reports/history/history_trend.h"

namespace chaosbench::reports {

// Which history a result is about.
struct HistoryPlace {
  std::string testbed;   // as the store names it ("unlabelled" for none)
  std::string scenario;
  std::string path;      // its history.jsonl
};

nlohmann::ordered_json history_gate_json(const HistoryGateResult& result, const HistoryPlace& place,
                                         const std::string& current_run);

// One object per history: its place, runs, the newest run, and the trends.
nlohmann::ordered_json history_trends_json(const HistoryPlace& place, const std::vector<HistoryEntry>& history,
                                           const std::vector<HistoryTrend>& trends);

}  // namespace chaosbench::reports
