#include "reports/goodput_json.h"

#include <cmath>

namespace chaosbench::reports {
namespace {

using json = nlohmann::ordered_json;

json number(double v) { return std::isfinite(v) ? json(v) : json(nullptr); }
json number(const std::optional<double>& v) { return v ? number(*v) : json(nullptr); }
json pct(double fraction) { return number(100 * fraction); }
json pct(const std::optional<double>& fraction) { return fraction ? pct(*fraction) : json(nullptr); }

json value(const GoodputInputs::Value& v) {
  return {{"value", number(v.value)}, {"provenance", to_string(v.provenance)}, {"source", v.source}};
}

json run_inputs(const GoodputInputs& in) {
  if (!in.run_nodes) return nullptr;
  json r{{"nodes", *in.run_nodes}, {"steps", number(in.run_steps)}};
  r["measured_goodput_pct"] = number(in.measured_goodput_pct);
  r["measured_ettr"] = number(in.measured_ettr);
  r["measured_mtti_s"] = number(in.measured_mtti_s);
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
  j["downtime_s"] = number(in.downtime_s());
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
    failures.push_back({{"detect_s", number(f.detect_s)},
                        {"restart_s", number(f.restart_s)},
                        {"restore_s", number(f.restore_s)},
                        {"recompute_s", number(f.recompute_s)},
                        {"rejoin_s", number(f.rejoin_s)}});
  j["measured_failures"] = failures;
  j["run"] = run_inputs(in);
  return j;
}

json row_json(const GoodputReport::Row& r, double interval_s) {
  const auto& mc = r.monte_carlo;
  json current{{"interval_s", number(interval_s)},
               {"first_order_pct", pct(r.first_order)},
               {"daly_exact_pct", pct(r.daly_exact)},
               {"monte_carlo_pct", pct(mc.goodput)},
               {"ettr", number(mc.ettr)},
               {"waste_pct", {{"saves", pct(mc.saves)}, {"lost_work", pct(mc.lost)}, {"downtime", pct(mc.downtime)}}},
               {"first_order_valid", r.first_order_valid.valid},
               {"first_order_invalid_reason", r.first_order_valid.reason}};
  json optimum{{"young_s", number(r.young_s)},
               {"daly_s", number(r.daly_s)},
               {"exact_s", number(r.exact_s)},
               {"monte_carlo_s", number(r.monte_carlo_opt_s)},
               {"monte_carlo_pct", pct(r.goodput_at_opt)},
               {"daly_exact_pct", pct(r.daly_exact_at_opt)}};
  return {{"nodes", r.nodes},     {"gpus", number(r.gpus)}, {"job_mtbf_s", number(r.job_mtbf_s)},
          {"run_nodes", r.run_nodes}, {"current", current},   {"optimum", optimum}};
}

json curve_json(const GoodputReport::IntervalCurve& c) {
  json points = json::array();
  for (const auto& p : c.points)
    points.push_back({{"interval_s", number(p.interval_s)},
                      {"first_order_pct", pct(p.first_order)},
                      {"daly_exact_pct", pct(p.daly_exact)},
                      {"monte_carlo_pct", pct(p.monte_carlo)}});
  return {{"nodes", c.nodes},           {"job_mtbf_s", number(c.job_mtbf_s)}, {"current_s", number(c.current_s)},
          {"young_s", number(c.young_s)}, {"daly_s", number(c.daly_s)},         {"exact_s", number(c.exact_s)},
          {"monte_carlo_s", number(c.monte_carlo_opt_s)}, {"points", points}};
}

json prediction_json(const std::optional<GoodputReport::RunPrediction>& run) {
  if (!run) return nullptr;
  const auto& f = run->failures;
  const auto& j = run->jobs;
  json out{{"nodes", run->nodes},
           {"fault", f.fault},
           {"type", f.type},
           {"process", to_string(f.process)},
           {"mtbf_s", number(f.mtbf_s)},
           {"shape", number(f.shape)},
           {"mean_between_failures_s", number(f.mean_s())},
           {"offset_s", number(f.offset_s)},
           {"dead_time_s", number(f.dead_time_s)},
           {"max_occurrences", f.max_occurrences},
           {"probability", number(f.probability)},
           {"work_s", number(run->work_s)},
           {"startup_s", number(run->startup_s)},
           {"jobs", j.jobs},
           {"mean_failures", number(j.mean_failures)}};
  out["goodput_pct"] = {{"low", pct(j.low)}, {"median", pct(j.median)}, {"high", pct(j.high)}};
  out["ettr"] = {{"low", number(j.ettr_low)}, {"median", number(j.ettr_median)}, {"high", number(j.ettr_high)}};
  out["measured_goodput_pct"] = pct(run->measured_goodput);
  out["goodput_inside"] = run->goodput_inside ? json(*run->goodput_inside) : json(nullptr);
  out["measured_ettr"] = number(run->measured_ettr);
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
