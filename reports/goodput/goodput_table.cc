#include "reports/goodput/goodput_table.h"

#include <cmath>
#include <fmt/format.h>

#include "reports/goodput/goodput_assumptions.h"

namespace chaosbench::reports {
namespace {

std::string goodput_or_dash(const std::optional<double>& v) { return v ? format_goodput(*v) : "-"; }
std::string duration_or_dash(const std::optional<double>& v) { return v ? format_duration_s(*v) : "-"; }

std::string count_text(double n) {
  if (n >= 1e6) return fmt::format("{:.3g}M", n / 1e6);
  if (n >= 1e4) return fmt::format("{:.3g}k", n / 1e3);
  return fmt::format("{:g}", n);
}

std::string input_value(const GoodputInputs::Value& v, bool duration) {
  return duration ? format_duration_s(v.value) : fmt::format("{:g}", v.value);
}

std::string costs_text(const GoodputReport& r) {
  if (r.bootstrap) return fmt::format("measured costs ({})", r.costs);
  const auto p = r.inputs.detect_s.provenance;
  return fmt::format("{} costs", to_string(p));
}

std::string validity_text(const FirstOrderValidity& v) {
  if (v.valid) return "yes";
  if (!v.exponential) return "no: Weibull";
  const double pct = 100 * v.waste;  // 3 significant digits, whole percent from 100 on
  if (pct < 100) return fmt::format("no: waste {:.3g}%", pct);
  return pct < 1e6 ? fmt::format("no: waste {:.0f}%", pct) : fmt::format("no: waste {:.2e}%", pct);
}

}  // namespace

std::string format_goodput(double fraction) {
  if (!std::isfinite(fraction)) return "-";
  if (fraction < 0) return "<0%";  // the first-order formula far outside its validity
  return fmt::format("{:.1f}%", 100 * fraction);
}

TextRows goodput_table_rows(const GoodputReport& report) {
  TextRows rows{{"N", "GPUs", "job MTBF", "1st-order", "Daly exact", "MC", "tau Young", "tau Daly", "tau MC",
                 "MC at opt", "ETTR", "1st-order valid"}};
  for (const auto& r : report.rows)
    rows.push_back({fmt::format("{}{}", r.nodes, r.run_nodes ? "*" : ""), count_text(r.gpus),
                    format_duration_s(r.job_mtbf_s), format_goodput(r.first_order), goodput_or_dash(r.daly_exact),
                    format_goodput(r.monte_carlo.goodput), duration_or_dash(r.young_s), duration_or_dash(r.daly_s),
                    duration_or_dash(r.monte_carlo_opt_s), goodput_or_dash(r.goodput_at_opt),
                    fmt::format("{:.3f}", r.monte_carlo.ettr), validity_text(r.first_order_valid)});
  return rows;
}

std::vector<std::string> goodput_table_notes(const GoodputReport& report) {
  std::vector<std::string> notes{""};
  for (const auto& r : report.rows) notes.push_back(r.first_order_valid.reason);
  return notes;
}

TextRows goodput_input_rows(const GoodputReport& report) {
  const auto& in = report.inputs;
  TextRows rows{{"input", "value", "provenance", "source"}};
  auto add = [&rows](const char* name, const GoodputInputs::Value& v, bool duration) {
    rows.push_back({name, input_value(v, duration), to_string(v.provenance), v.source});
  };
  add("step time", in.step_time_s, true);
  add("checkpoint interval tau", in.checkpoint_interval_s, true);
  add("checkpoint cost C", in.checkpoint_cost_s, true);
  add("detect D", in.detect_s, true);
  add("restart Rs", in.restart_s, true);
  add("restore Rr", in.restore_s, true);
  add("recompute", in.recompute_s, true);
  add("rejoin", in.rejoin_s, true);
  add("startup S", in.startup_s, true);
  add("running efficiency (run only)", in.running_efficiency, false);
  rows.push_back({"lost work", to_string(in.lost_work), to_string(in.lost_work_source.provenance),
                  in.lost_work_source.source});
  add("per-node MTBF M_node", in.node_mtbf_s, true);
  rows.push_back({"failure process", to_string(in.process), to_string(in.weibull_shape.provenance),
                  in.process == GoodputInputs::Process::kWeibull
                      ? fmt::format("shape {:g} ({})", in.weibull_shape.value, in.weibull_shape.source)
                      : in.weibull_shape.source});
  add("GPUs per node", in.gpus_per_node, false);
  rows.push_back({"costs in the Monte Carlo", report.bootstrap ? "bootstrap" : "fixed", "", report.costs});
  return rows;
}

std::string goodput_prediction_text(const GoodputReport& report) {
  if (!report.run) return "";
  const auto& p = *report.run;
  const auto& f = p.failures;
  std::string failures = f.process == GoodputInputs::Process::kWeibull
                             ? fmt::format("Weibull scale {} shape {:g}", format_duration_s(f.mtbf_s), f.shape)
                             : fmt::format("MTBF {}", format_duration_s(f.mtbf_s));
  if (f.probability < 1) failures += fmt::format(" x probability {:g}", f.probability);
  const std::string model = fmt::format("model 95% prediction interval [{}, {}] (median {}) for N={}, {}, {}",
                                        format_goodput(p.jobs.low), format_goodput(p.jobs.high),
                                        format_goodput(p.jobs.median), p.nodes, failures, costs_text(report));
  if (!p.measured_goodput) return "measured goodput: none in the results - " + model;
  return fmt::format("measured goodput {} - {}: {}", format_goodput(*p.measured_goodput), model,
                     *p.goodput_inside ? "inside" : "outside");
}

std::string goodput_ettr_text(const GoodputReport& report) {
  if (!report.run) return "";
  const auto& p = *report.run;
  const std::string model = fmt::format("model 95% prediction interval [{:.3f}, {:.3f}] (median {:.3f})",
                                        p.jobs.ettr_low, p.jobs.ettr_high, p.jobs.ettr_median);
  if (!p.measured_ettr) return "measured ETTR: none in the results - " + model;
  return fmt::format("measured ETTR {:.3f} - {}: {}", *p.measured_ettr, model, *p.ettr_inside ? "inside" : "outside");
}

}  // namespace chaosbench::reports
