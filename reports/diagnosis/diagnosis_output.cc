#include "reports/diagnosis/diagnosis_output.h"

#include <cmath>
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "reports/model/run_model.h"

namespace chaosbench::reports {
namespace {

using json = nlohmann::ordered_json;

json num(double v) { return std::isfinite(v) ? json(std::round(v * 1e4) / 1e4) : json(nullptr); }

json labels_of(const common::Labels& labels) {
  json out = json::object();
  for (const auto& [k, v] : labels) out[k] = label_to_string(v);
  return out;
}

}  // namespace

std::string diagnosis_json(const Diagnosis& d, int indent) {
  json out;
  out["named"] = !d.culprits.empty();
  json culprits = json::array();
  for (const auto& c : d.culprits) {
    json e = json::array();
    for (const auto& x : c.evidence)
      e.push_back({{"series", x.series}, {"labels", labels_of(x.labels)}, {"t", num(x.t)}, {"value", num(x.value)},
                   {"baseline", num(x.baseline)}, {"peers", num(x.peers)}, {"sigmas", num(x.sigmas)}, {"text", x.text}});
    culprits.push_back({{"class", c.cls}, {"component", c.component}, {"what", c.what}, {"start_s", num(c.start_s)},
                        {"end_s", num(c.end_s)}, {"first_named_s", num(c.first_named_s)},
                        {"confidence", num(c.confidence)}, {"evidence", e}});
  }
  out["culprits"] = culprits;
  out["window_s"] = num(d.window_s);
  out["windows"] = d.windows;
  out["inputs"] = d.inputs;
  out["notes"] = d.notes;
  return out.dump(indent) + "\n";
}

std::string culprit_line(const DiagnosisCulprit& c) {
  return fmt::format("{} {} ({}), confidence {:.2f}, abnormal {:.1f} s to {:.1f} s, named at {:.1f} s", c.cls,
                     c.component, c.what, c.confidence, c.start_s, c.end_s, c.first_named_s);
}

std::string diagnosis_text(const Diagnosis& d) {
  std::string out;
  if (d.culprits.empty()) {
    out += fmt::format("Nothing stands out: no node, link, NIC or device departed from its own baseline and its "
                       "peers for 3 of 4 windows ({} windows of {:.1f} s judged).\n", d.windows, d.window_s);
  } else {
    out += fmt::format("{} culprit{}, most likely first (times in seconds since the workload started):\n",
                       d.culprits.size(), d.culprits.size() == 1 ? "" : "s");
    for (std::size_t i = 0; i < d.culprits.size(); ++i) {
      out += fmt::format("{}. {}\n", i + 1, culprit_line(d.culprits[i]));
      for (const auto& e : d.culprits[i].evidence) out += fmt::format("     at {:.0f} s: {}\n", e.t, e.text);
    }
  }
  if (!d.inputs.empty()) {
    out += "Measured:";
    for (const auto& i : d.inputs) out += " " + i + (&i == &d.inputs.back() ? "" : ",");
    out += "\n";
  }
  for (const auto& n : d.notes) out += "Note: " + n + "\n";
  return out;
}

}  // namespace chaosbench::reports
