// results.json's "schedule" (and `run --dry-run --json`): the realised fault schedule as
// JSON and back. Reading tolerates anything (a missing or mistyped field reads as empty).
#pragma once

#include <nlohmann/json_fwd.hpp>
#include <vector>

#include "reports/model/schedule_entry.h"

namespace chaosbench::reports {

nlohmann::ordered_json schedule_to_json(const std::vector<ScheduleEntry>& schedule);
std::vector<ScheduleEntry> schedule_from_json(const nlohmann::ordered_json& j);

}  // namespace chaosbench::reports
