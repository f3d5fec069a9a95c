// checks: limits on metric records. Quantity strings are converted into the metric's unit
// here, once, so the runner compares plain numbers.
#include <fmt/format.h>

#include "common/metrics/metric_catalogue.h"
#include "common/metrics/metric_name.h"
#include "harness/scenario/scenario_parts.h"
#include "harness/scenario/suggest.h"

namespace chaosbench::harness {
namespace {

const std::vector<std::string_view> kCheckStats{"value", "mean", "min", "max", "p50", "p90", "p99"};

}  // namespace

std::optional<double> read_limit(ParseContext& ctx, const json& v, const std::string& path, std::string_view unit) {
  if (v.is_number()) return v.get<double>();
  if (!v.is_string()) {
    ctx.error(path, fmt::format("expected a number or a quantity string such as \"30s\", got {}", describe(v)));
    return std::nullopt;
  }
  const auto& text = v.get_ref<const std::string&>();
  auto fail = [&](const std::string& why) {
    ctx.error(path, why);
    return std::nullopt;
  };
  if (unit == "s" || unit == "ms" || unit == "us" || unit == "ns") {
    auto d = common::parse_duration(text);
    if (!d) return fail(d.error);
    double ns = static_cast<double>(d->value.count());
    double per = unit == "s" ? 1e9 : unit == "ms" ? 1e6 : unit == "us" ? 1e3 : 1.0;
    return ns / per;
  }
  if (unit == "bytes") {
    auto s = common::parse_size(text);
    if (!s) return fail(s.error);
    return static_cast<double>(s->bytes);
  }
  if (unit == "%") {
    auto p = common::parse_percent(text);
    if (!p) return fail(p.error);
    return p->value;
  }
  if (unit == "GB/s") {
    auto r = common::parse_rate(text);
    if (!r) return fail(r.error);
    return static_cast<double>(r->bits_per_second) / 8e9;
  }
  return fail(fmt::format("\"{}\" cannot be converted into this metric's unit ({}): give a plain number", text,
                          unit.empty() ? "none" : unit));
}

void warn_uncatalogued_metric(ParseContext& ctx, const std::string& path, const std::string& name) {
  if (common::find_metric(name)) return;
  std::vector<std::string_view> catalogue;
  for (const auto& m : common::metric_catalogue()) catalogue.push_back(m.name);
  ctx.warning(path, fmt::format("\"{}\" is not in the catalogue (`chaosbench metrics`){}; fine for a metric your "
                                "workload sends itself", name, suggestion_suffix(name, catalogue)));
}

bench::Labels read_labels(ParseContext& ctx, const json& v, const std::string& path) {
  bench::Labels out;
  if (!v.is_object()) {
    ctx.error(path, fmt::format("expected an object of label values, got {}", describe(v)));
    return out;
  }
  for (const auto& [k, value] : v.items()) {
    if (value.is_string()) out[k] = value.get<std::string>();
    else if (value.is_number_integer()) out[k] = value.get<std::int64_t>();
    else if (value.is_number()) out[k] = value.get<double>();
    else ctx.error(join_path(path, k), fmt::format("expected a string or number, got {}", describe(value)));
  }
  return out;
}

std::vector<CheckSpec> parse_checks(ParseContext& ctx, const json& value) {
  std::vector<CheckSpec> out;
  if (!value.is_array()) {
    ctx.error("checks", fmt::format("expected an array of checks, got {}", describe(value)));
    return out;
  }
  for (std::size_t i = 0; i < value.size(); ++i) {
    std::string path = join_path("checks", i);
    ObjectReader r(ctx, value[i], path, {"metric", "labels", "phase", "stat", "min", "max", "tolerance"});
    if (!r.ok()) continue;
    CheckSpec c;
    r.require("metric", "a metric name such as \"comm/busbw\"");
    if (auto m = r.string("metric")) {
      c.metric = *m;
      // Scraped series keep their Prometheus names ("node_load1", "x_total:rate").
      if (!common::is_metric_name(*m))
        ctx.error(r.path_of("metric"), fmt::format("expected a slash-separated metric name such as \"comm/busbw\" (or a "
                                                   "scraped Prometheus name such as \"node_load1\"), got \"{}\"", *m));
      else if (m->find('/') != std::string::npos)
        warn_uncatalogued_metric(ctx, r.path_of("metric"), *m);
    }
    if (const json* labels = r.raw("labels")) c.labels = read_labels(ctx, *labels, r.path_of("labels"));
    if (auto p = r.string("phase")) c.phase = *p;
    if (auto s = r.choice("stat", kCheckStats)) c.stat = *s;
    if (!r.has("min") && !r.has("max") && !r.has("tolerance"))
      ctx.error(path, "a check needs \"min\" or \"max\" (or both), or a baseline \"tolerance\"");
    // The baseline gate's allowance for this metric (reports/gate/gate.h reads it from the
    // resolved scenario): a percentage, "10%" or 10.
    if (const json* v = r.raw("tolerance")) {
      std::optional<double> pct;
      if (v->is_number()) pct = v->get<double>();
      else if (v->is_string()) {
        auto p = common::parse_percent(v->get<std::string>());
        if (!p) ctx.error(r.path_of("tolerance"), p.error);
        else pct = p->value;
      } else {
        ctx.error(r.path_of("tolerance"), fmt::format("expected a percentage such as \"10%\", got {}", describe(*v)));
      }
      if (pct && !(*pct >= 0 && *pct <= 100))
        ctx.error(r.path_of("tolerance"), fmt::format("expected a percentage from 0% to 100%, got {}", *pct));
      else if (pct) c.tolerance_pct = *pct;
    }
    const auto* spec = common::find_metric(c.metric);
    std::string_view unit = spec ? spec->unit : std::string_view();
    if (const json* v = r.raw("min")) c.min = read_limit(ctx, *v, r.path_of("min"), unit);
    if (const json* v = r.raw("max")) c.max = read_limit(ctx, *v, r.path_of("max"), unit);
    if (c.min && c.max && *c.min > *c.max)
      ctx.error(path, fmt::format("min ({}) is larger than max ({})", *c.min, *c.max));
    out.push_back(std::move(c));
  }
  return out;
}

}  // namespace chaosbench::harness
