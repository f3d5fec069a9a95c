#include "bench/protocol/record.h"

#include <chrono>
#include <climits>
#include <cmath>
#include <cstdint>
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "common/json/json_limits.h"

namespace chaosbench::bench {
namespace {

using nlohmann::json;

bool to_label(const json& j, LabelValue& out) {
  if (j.is_string()) {
    out = j.get<std::string>();
  } else if (j.is_number_unsigned()) {
    // Above INT64_MAX an unsigned would wrap negative: refused rather than changed.
    if (j.get<std::uint64_t>() > static_cast<std::uint64_t>(INT64_MAX)) return false;
    out = static_cast<std::int64_t>(j.get<std::uint64_t>());
  } else if (j.is_number_integer()) {
    out = j.get<std::int64_t>();
  } else if (j.is_number()) {
    out = j.get<double>();
  } else if (j.is_boolean()) {
    out = std::string(j.get<bool>() ? "true" : "false");
  } else {
    return false;
  }
  return true;
}

json label_json(const Labels& labels) {
  json out = json::object();
  for (const auto& [k, v] : labels) {
    std::visit([&](const auto& x) { out[k] = x; }, v);
  }
  return out;
}

// rank, time and name, which samples and events share; false with `error` set.
bool read_common(const json& j, int& rank, double& time, std::string& name, std::string& error) {
  auto rk = j.find("rank");
  if (rk == j.end() || !rk->is_number_integer() || rk->get<std::int64_t>() < 0 ||
      rk->get<std::int64_t>() >= kMaxRank ||
      (rk->is_number_unsigned() && rk->get<std::uint64_t>() >= static_cast<std::uint64_t>(kMaxRank))) {
    error = fmt::format("\"rank\" must be an integer from 0 to {}", kMaxRank - 1);
    return false;
  }
  rank = rk->get<int>();
  auto t = j.find("time");
  if (t != j.end()) {
    if (!t->is_number()) {
      error = "\"time\" must be a number (seconds since the Unix epoch)";
      return false;
    }
    time = t->get<double>();
  }
  auto n = j.find("name");
  if (n == j.end() || !n->is_string() || n->get_ref<const std::string&>().empty()) {
    error = "\"name\" must be a non-empty string";
    return false;
  }
  name = n->get<std::string>();
  return true;
}

// The object at `key` ("labels" of a sample, "fields" of an event), if any.
bool read_labels(const json& j, const char* key, Labels& out, std::string& error) {
  auto it = j.find(key);
  if (it == j.end()) return true;
  if (!it->is_object()) {
    error = fmt::format("\"{}\" must be an object", key);
    return false;
  }
  for (const auto& [k, v] : it->items()) {
    // The harness adds "phase" and "rank" itself; a workload's own would merge series.
    if (std::string_view(key) == "labels" && (k == "phase" || k == "rank")) {
      error = fmt::format("label \"{}\" is reserved (the harness sets it)", k);
      return false;
    }
    LabelValue lv;
    if (!to_label(v, lv)) {
      error = fmt::format("\"{}.{}\" must be a string, number (integers up to 2^63-1) or boolean", key, k);
      return false;
    }
    out.emplace(k, std::move(lv));
  }
  return true;
}

bool read_sample(const json& j, Sample& s, std::string& error) {
  if (!read_common(j, s.rank, s.time, s.name, error)) return false;
  auto v = j.find("value");
  if (v == j.end() || !v->is_number() || !std::isfinite(v->get<double>())) {
    error = "\"value\" must be a finite number";
    return false;
  }
  s.value = v->get<double>();
  auto u = j.find("unit");
  if (u != j.end()) {
    if (!u->is_string()) {
      error = "\"unit\" must be a string";
      return false;
    }
    s.unit = u->get<std::string>();
  }
  return read_labels(j, "labels", s.labels, error);
}

}  // namespace

DecodeResult decode_record(std::string_view line) {
  DecodeResult r;
  // Nesting is bounded first: a rank's line is untrusted, and nlohmann/json recurses.
  json j = common::parse_json_bounded(line, &r.error);
  if (j.is_discarded()) return r;
  if (!j.is_object()) {
    r.error = "not a JSON object";
    return r;
  }
  auto type = j.find("type");
  if (type == j.end() || !type->is_string()) {
    r.error = "missing \"type\" (\"sample\" or \"event\")";
    return r;
  }
  const auto& kind = type->get_ref<const std::string&>();
  if (kind == "sample") {
    Sample s;
    if (!read_sample(j, s, r.error)) return r;
    r.record = std::move(s);
  } else if (kind == "event") {
    Event e;
    if (!read_common(j, e.rank, e.time, e.name, r.error) || !read_labels(j, "fields", e.fields, r.error)) return r;
    r.record = std::move(e);
  } else {
    r.error = fmt::format("unknown \"type\" \"{}\" (expected \"sample\" or \"event\")", kind);
    return r;
  }
  r.ok = true;
  return r;
}

std::string encode_record(const Record& record) {
  json j;
  if (const auto* s = std::get_if<Sample>(&record)) {
    j = {{"type", "sample"}, {"rank", s->rank}, {"time", s->time}, {"name", s->name},
         {"value", s->value}, {"unit", s->unit}};
    if (!s->labels.empty()) j["labels"] = label_json(s->labels);
  } else {
    const auto& e = std::get<Event>(record);
    j = {{"type", "event"}, {"rank", e.rank}, {"time", e.time}, {"name", e.name}};
    if (!e.fields.empty()) j["fields"] = label_json(e.fields);
  }
  std::string out = j.dump();
  out.push_back('\n');
  return out;
}

double wall_time_now() {
  return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}

}  // namespace chaosbench::bench
