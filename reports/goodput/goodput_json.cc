#include "reports/goodput/goodput_json.h"

#include <cmath>

#include "common/json/json_values.h"

namespace chaosbench::reports {
namespace {

using json = nlohmann::ordered_json;
using common::json_finite;

json pct(double fraction) { return json_finite(100 * fraction); }
json pct(const std::optional<double>& fraction) { return fraction ? pct(*fraction) : json(nullptr); }

json value(const GoodputInputs::Value& v) {
  return {{"value", json_finite(v.value)}, {"provenance", to_string(v.provenance)}, {"source", v.source}};
}

json run_inputs(const GoodputInputs& in) {
  if (!in.run_nodes) return nullptr;
  json r{{"nodes", *in.run_nodes}, {"steps", json_finite(in.run_steps)}};
  r["measured_goodput_pct"] = json_finite(in.measured_goodput_pct);
  r["measured_ettr"] = json_finite(in.measured_ettr);
  r["measured_mtti_s"] = json_finite(in.measured_mtti_s);
  return r;
}

json inputs_json(const GoodputReport& report) {
  const auto& in = report.inputs;
  json j;
  j["step_time_s"] = value(in.step_time_s);
  j["checkpoint_interval_s"] = value(in.checkpoint_interval_s);
  j["checkpoint_cost_s"] = value(in.checkpoint_cost_s);
  j["detect_s"] = value(in.detect_s);
  j["restart_s"] = value(in.restart_s);
  j["restore_s"] = value(in.restore_s);
  j["recompute_s"] = value(in.recompute_s);
  j["rejoin_s"] = value(in.rejoin_s);
  j["downtime_s"] = json_finite(in.downtime_s());
  j["startup_s"] = value(in.startup_s);
  j["running_efficiency"] = value(in.running_efficiency);
  j["lost_work"] = {{"mode", to_string(in.lost_work)},
                    {"provenance", to_string(in.lost_work_source.provenance)},
                    {"source", in.lost_work_source.source}};
  j["node_mtbf_s"] = value(in.node_mtbf_s);
  j["process"] = to_string(in.process);
  j["weibull_shape"] = value(in.weibull_shape);
  j["gpus_per_node"] = value(in.gpus_per_node);
  j["nodes"] = in.nodes;
  j["costs"] = report.costs;
  j["bootstrap"] = report.bootstrap;
  json failures = json::array();
  for (const auto& f : in.measured_failures)
    failures.push_back({{"detect_s", json_finite(f.detect_s)},
                        {"restart_s", json_finite(f.restart_s)},
                        {"restore_s", json_finite(f.restore_s)},
                        {"recompute_s", json_finite(f.recompute_s)},
                        {"rejoin_s", json_finite(f.rejoin_s)}});
  j["measured_failures"] = failures;
  j["run"] = run_inputs(in);
  return j;
}

json row_json(const GoodputReport::Row& r, double interval_s) {
  const auto& mc = r.monte_carlo;
  json current{{"interval_s", json_finite(interval_s)},
               {"first_order_pct", pct(r.first_order)},
               {"daly_exact_pct", pct(r.daly_exact)},
               {"monte_carlo_pct", pct(mc.goodput)},
               {"ettr", json_finite(mc.ettr)},
               {"waste_pct", {{"saves", pct(mc.saves)}, {"lost_work", pct(mc.lost)}, {"downtime", pct(mc.downtime)}}},
               {"first_order_valid", r.first_order_valid.valid},
               {"first_order_invalid_reason", r.first_order_valid.reason}};
  json optimum{{"young_s", json_finite(r.young_s)},
               {"daly_s", json_finite(r.daly_s)},
               {"exact_s", json_finite(r.exact_s)},
               {"monte_carlo_s", json_finite(r.monte_carlo_opt_s)},
               {"monte_carlo_pct", pct(r.goodput_at_opt)},
               {"daly_exact_pct", pct(r.daly_exact_at_opt)}};
  return {{"nodes", r.nodes},     {"gpus", json_finite(r.gpus)}, {"job_mtbf_s", json_finite(r.job_mtbf_s)},
          {"run_nodes", r.run_nodes}, {"current", current},   {"optimum", optimum}};
}

json curve_json(const GoodputReport::IntervalCurve& c) {
  json points = json::array();
  for (const auto& p : c.points)
    points.push_back({{"interval_s", json_finite(p.interval_s)},
                      {"first_order_pct", pct(p.first_order)},
                      {"daly_exact_pct", pct(p.daly_exact)},
                      {"monte_carlo_pct", pct(p.monte_carlo)}});
  return {{"nodes", c.nodes},           {"job_mtbf_s", json_finite(c.job_mtbf_s)}, {"current_s", json_finite(c.current_s)},
          {"young_s", json_finite(c.young_s)}, {"daly_s", json_finite(c.daly_s)},         {"exact_s", json_finite(c.exact_s)},
          {"monte_carlo_s", json_finite(c.monte_carlo_opt_s)}, {"points", points}};
}

json prediction_json(const std::optional<GoodputReport::RunPrediction>& run) {
  if (!run) return nullptr;
  const auto& f = run->failures;
  const auto& j = run->jobs;
  json out{{"nodes", run->nodes},
           {"fault", f.fault},
           {"type", f.type},
           {"process", to_string(f.process)},
           {"mtbf_s", json_finite(f.mtbf_s)},
           {"shape", json_finite(f.shape)},
           {"mean_between_failures_s", json_finite(f.mean_s())},
           {"offset_s", json_finite(f.offset_s)},
           {"dead_time_s", json_finite(f.dead_time_s)},
           {"max_occurrences", f.max_occurrences},
           {"probability", json_finite(f.probability)},
           {"work_s", json_finite(run->work_s)},
           {"startup_s", json_finite(run->startup_s)},
           {"jobs", j.jobs},
           {"mean_failures", json_finite(j.mean_failures)}};
  out["goodput_pct"] = {{"low", pct(j.low)}, {"median", pct(j.median)}, {"high", pct(j.high)}};
  out["ettr"] = {{"low", json_finite(j.ettr_low)}, {"median", json_finite(j.ettr_median)}, {"high", json_finite(j.ettr_high)}};
  out["measured_goodput_pct"] = pct(run->measured_goodput);
  out["goodput_inside"] = run->goodput_inside ? json(*run->goodput_inside) : json(nullptr);
  out["measured_ettr"] = json_finite(run->measured_ettr);
  out["ettr_inside"] = run->ettr_inside ? json(*run->ettr_inside) : json(nullptr);
  return out;
}

}  // namespace

nlohmann::ordered_json goodput_json(const GoodputReport& report) {
  json rows = json::array();
  for (const auto& r : report.rows) rows.push_back(row_json(r, report.inputs.checkpoint_interval_s.value));
  return {{"schema_version", kGoodputJsonSchema},
          {"model", "goodput"},
          {"seed", report.seed},
          {"steady_state_failures", report.steady_failures},
          {"inputs", inputs_json(report)},
          {"rows", rows},
          {"interval_curve", curve_json(report.curve)},
          {"run_prediction", prediction_json(report.run)},
          {"notes", report.inputs.notes},
          {"assumptions", report.assumptions}};
}

}  // namespace chaosbench::reports
