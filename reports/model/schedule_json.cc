#include "reports/model/schedule_json.h"

#include <cmath>
#include <limits>

#include "common/json/json_values.h"

namespace chaosbench::reports {
namespace {

using json = nlohmann::ordered_json;
using common::json_finite;
using common::json_optional_number;

// A whole number in [lo, hi], or nullopt (a double outside an integer's range has no
// defined conversion).
std::optional<std::int64_t> read_integer(const json& j, const char* key, double lo, double hi) {
  auto v = json_optional_number(j, key);
  if (!v || *v < lo || *v > hi || std::floor(*v) != *v) return std::nullopt;
  return static_cast<std::int64_t>(*v);
}

}  // namespace

json schedule_to_json(const std::vector<ScheduleEntry>& schedule) {
  json out = json::array();
  for (const auto& e : schedule) {
    json j = {{"fault", e.fault}, {"type", e.type}, {"occurrence", e.occurrence}, {"fires", e.fires}};
    if (e.arrival_s) j["arrival_s"] = json_finite(e.arrival_s);
    if (e.due_s) j["due_s"] = json_finite(e.due_s);
    if (e.at_step) j["at_step"] = *e.at_step;
    if (!e.after.empty()) {
      j["after"] = e.after;
      j["delay_s"] = e.delay_s;
    }
    j["duration_s"] = json_finite(e.duration_s);
    if (!e.nodes.empty()) j["nodes"] = e.nodes;
    out.push_back(std::move(j));
  }
  return out;
}

std::vector<ScheduleEntry> schedule_from_json(const json& j) {
  std::vector<ScheduleEntry> out;
  if (!j.is_array()) return out;
  for (const auto& x : j) {
    if (!x.is_object()) continue;
    ScheduleEntry e;
    if (auto it = x.find("fault"); it != x.end() && it->is_string()) e.fault = it->get<std::string>();
    if (auto it = x.find("type"); it != x.end() && it->is_string()) e.type = it->get<std::string>();
    if (auto it = x.find("after"); it != x.end() && it->is_string()) e.after = it->get<std::string>();
    if (auto it = x.find("fires"); it != x.end() && it->is_boolean()) e.fires = it->get<bool>();
    e.occurrence = static_cast<int>(read_integer(x, "occurrence", 1, 1e6).value_or(1));
    e.arrival_s = json_optional_number(x, "arrival_s");
    e.due_s = json_optional_number(x, "due_s");
    e.at_step = read_integer(x, "at_step", 0, 9e18);
    e.delay_s = json_optional_number(x, "delay_s").value_or(0);
    e.duration_s = json_optional_number(x, "duration_s");
    if (auto it = x.find("nodes"); it != x.end() && it->is_array())
      for (const auto& n : *it)
        if (n.is_number_integer() && n.get<std::int64_t>() >= 0 && n.get<std::int64_t>() < 1000000)
          e.nodes.push_back(static_cast<int>(n.get<std::int64_t>()));
    out.push_back(std::move(e));
  }
  return out;
}

}  // namespace chaosbench::reports
