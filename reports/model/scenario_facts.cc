#include "reports/model/scenario_facts.h"

#include <algorithm>
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "common/json/json_limits.h"
#include "common/values/units.h"
#include "reports/model/run_model.h"

namespace chaosbench::reports {
namespace {

using Json = nlohmann::json;  // the plain (unordered) json: only read here

const Json* at(const Json& doc, const char* pointer) {
  Json::json_pointer p(pointer);
  return doc.contains(p) ? &doc.at(p) : nullptr;
}

std::string string_at(const Json& doc, const char* pointer) {
  const Json* v = at(doc, pointer);
  return v && v->is_string() ? v->get<std::string>() : std::string();
}

// A check's tolerance as a fraction: "10%" (the scenario's own percent syntax) or 10.
std::optional<double> tolerance_fraction(const Json& v) {
  if (v.is_number()) return v.get<double>() / 100.0;
  if (!v.is_string()) return std::nullopt;
  auto p = common::parse_percent(v.get<std::string>());
  if (!p) return std::nullopt;
  return p->value / 100.0;
}

// A label value in a check as the text a record's label is compared with.
std::string label_text(const Json& v) {
  if (v.is_string()) return v.get<std::string>();
  if (v.is_number_integer()) return std::to_string(v.get<std::int64_t>());
  if (v.is_number()) return fmt::format("{}", v.get<double>());
  return v.dump();
}

std::vector<ScenarioFacts::CheckTolerance> tolerances_of(const Json& doc) {
  std::vector<ScenarioFacts::CheckTolerance> out;
  const Json* checks = at(doc, "/checks");
  if (!checks || !checks->is_array()) return out;
  for (const auto& c : *checks) {
    if (!c.is_object() || !c.contains("tolerance") || !c.contains("metric") || !c["metric"].is_string()) continue;
    auto tol = tolerance_fraction(c["tolerance"]);
    if (!tol) continue;
    ScenarioFacts::CheckTolerance t{c["metric"].get<std::string>(), {}, std::nullopt, *tol};
    // Labels that are not an object restrict nothing.
    if (auto labels = c.find("labels"); labels != c.end() && labels->is_object())
      for (const auto& [k, v] : labels->items()) t.labels[k] = label_text(v);
    if (c.contains("phase") && c["phase"].is_string()) t.phase = c["phase"].get<std::string>();
    out.push_back(std::move(t));
  }
  return out;
}

void read_train_settings(const Json& doc, ScenarioFacts& f) {
  if (const Json* v = at(doc, "/workload/bucket_size")) {
    f.bucket_size_given = true;
    if (v->is_number_unsigned()) f.bucket_bytes = v->get<std::uint64_t>();
    else if (v->is_string())
      if (auto size = common::parse_size(v->get<std::string>())) f.bucket_bytes = size->bytes;
  }
  if (const Json* layers = at(doc, "/workload/model/layers"); layers && layers->is_array()) {
    for (const auto& width : *layers) {
      if (!width.is_number()) {
        f.model_layers.clear();
        break;
      }
      f.model_layers.push_back(width.get<double>());
    }
  }
  if (const Json* v = at(doc, "/workload/checkpoint/async"); v && v->is_boolean()) f.checkpoint_async = v->get<bool>();
  f.checkpoint_mode = string_at(doc, "/workload/checkpoint/mode");
  if (const Json* v = at(doc, "/workload/checkpoint/every_steps"); v && v->is_number())
    f.checkpoint_every = v->get<double>();
  f.recovery_mode = string_at(doc, "/workload/recovery/mode");
  if (f.workload_kind == "train") {
    f.batch_size = 1024;
    f.microbatches = 1;
  }
  if (const Json* v = at(doc, "/workload/batch_size"); v && v->is_number()) f.batch_size = v->get<double>();
  if (const Json* v = at(doc, "/workload/parallel/microbatches"); v && v->is_number())
    f.microbatches = v->get<double>();
}

// A duration as the resolved scenario writes it: a string such as "30s", or seconds.
std::optional<double> seconds_of(const Json& v) {
  if (v.is_number()) return v.get<double>();
  if (!v.is_string()) return std::nullopt;
  auto d = common::parse_duration(v.get<std::string>());
  if (!d) return std::nullopt;
  return d->seconds();
}

std::optional<double> seconds_at(const Json& object, const char* key) {
  auto it = object.find(key);
  return it == object.end() ? std::nullopt : seconds_of(*it);
}

std::vector<ScenarioFacts::ArrivalFault> arrival_faults_of(const Json& doc) {
  std::vector<ScenarioFacts::ArrivalFault> out;
  const Json* faults = at(doc, "/faults");
  if (!faults || !faults->is_array()) return out;
  for (const auto& f : *faults) {
    if (!f.is_object() || !f.contains("arrivals") || !f["arrivals"].is_object()) continue;
    const Json& a = f["arrivals"];
    ScenarioFacts::ArrivalFault x;
    x.process = "poisson";
    if (auto it = a.find("process"); it != a.end()) x.process = it->is_string() ? it->get<std::string>() : "";
    const auto mean = seconds_at(a, x.process == "weibull" ? "scale" : "mtbf");
    if (!mean || (x.process != "poisson" && x.process != "weibull")) continue;
    x.mtbf_s = *mean;
    if (auto it = a.find("shape"); it != a.end() && it->is_number()) x.shape = it->get<double>();
    if (auto it = a.find("max_occurrences"); it != a.end() && it->is_number_integer())
      x.max_occurrences = static_cast<int>(std::clamp<std::int64_t>(it->get<std::int64_t>(), 0, 1'000'000'000));
    if (auto it = f.find("name"); it != f.end() && it->is_string()) x.name = it->get<std::string>();
    if (auto it = f.find("type"); it != f.end() && it->is_string()) x.type = it->get<std::string>();
    if (auto it = f.find("probability"); it != f.end() && it->is_number()) x.probability = it->get<double>();
    x.at_s = seconds_at(f, "at");
    x.duration_s = seconds_at(f, "duration");
    x.restart_after_s = seconds_at(f, "restart_after");
    out.push_back(std::move(x));
  }
  return out;
}

}  // namespace

ScenarioFacts scenario_facts_of(const std::string& scenario_json) {
  ScenarioFacts f;
  Json doc = common::parse_json_bounded<Json>(scenario_json.empty() ? "{}" : scenario_json);
  if (doc.is_discarded() || !doc.is_object()) return f;
  f.workload_kind = string_at(doc, "/workload/kind");
  if (const Json* v = at(doc, "/cluster/nodes"); v && v->is_number()) f.cluster_nodes = v->get<double>();
  read_train_settings(doc, f);
  f.tolerances = tolerances_of(doc);
  if (const Json* v = at(doc, "/workload/steps"); v && v->is_number()) f.steps = v->get<double>();
  f.arrival_faults = arrival_faults_of(doc);
  return f;
}

void set_scenario(RunResult& run, std::string resolved_json) {
  run.scenario_facts = scenario_facts_of(resolved_json);
  run.scenario_json = std::move(resolved_json);
}

}  // namespace chaosbench::reports
