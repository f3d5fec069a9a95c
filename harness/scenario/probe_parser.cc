// probes and abort: what is watched during the run and when the run stops itself
// (probe_spec.h). Every key a probe kind does not use is an error naming the kind, so a
// url on a metric probe never passes silently as if it were checked.
#include <algorithm>
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <set>

#include "common/metrics/metric_catalogue.h"
#include "harness/http/http_client.h"
#include "harness/scenario/placeholders.h"
#include "harness/scenario/scenario_parts.h"
#include "harness/scenario/suggest.h"

namespace chaosbench::harness {
namespace {

using namespace std::chrono_literals;

const std::vector<std::string_view> kKinds{"metric", "http", "command", "prometheus"};
const std::vector<std::string_view> kStats{"mean", "min", "max", "p50", "p90", "p99", "sum", "count", "last"};
// Every kind's; a key outside them is unknown (with a suggestion from them all).
const std::vector<std::string_view> kCommonKeys{"name", "kind", "mode", "interval"};
const std::vector<std::string_view> kAllKeys{"name",  "kind",   "mode",   "interval",      "timeout",    "min",
                                             "max",   "metric", "labels", "stat",          "window",     "url",
                                             "expect_status",   "json_field", "equals",   "argv", "node", "query"};

constexpr common::Duration kMinInterval{100ms};
constexpr common::Duration kMaxInterval{std::chrono::hours(1)};
constexpr std::size_t kMaxQueryBytes = 4096;

ProbeKind kind_from(std::string_view name) {
  if (name == "http") return ProbeKind::kHttp;
  if (name == "command") return ProbeKind::kCommand;
  if (name == "prometheus") return ProbeKind::kPrometheus;
  return ProbeKind::kMetric;
}

// The keys a kind takes beyond kCommonKeys.
std::vector<std::string_view> kind_keys(ProbeKind kind) {
  switch (kind) {
    case ProbeKind::kMetric: return {"metric", "labels", "stat", "window", "min", "max"};
    case ProbeKind::kHttp: return {"url", "expect_status", "json_field", "equals", "min", "max", "node", "timeout"};
    case ProbeKind::kCommand: return {"argv", "node", "timeout"};
    case ProbeKind::kPrometheus: return {"url", "query", "min", "max", "node", "timeout"};
  }
  return {};
}

// "a metric probe", "an http probe"
std::string probe_noun(ProbeKind kind) {
  return fmt::format("{} {} probe", kind == ProbeKind::kHttp ? "an" : "a", to_string(kind));
}

void check_kind_keys(ObjectReader& r, const json& probe, ProbeKind kind) {
  const auto own = kind_keys(kind);
  std::vector<std::string_view> accepted = kCommonKeys;
  accepted.insert(accepted.end(), own.begin(), own.end());
  r.narrow_reported_keys(accepted);
  for (const auto& [key, _] : probe.items()) {
    const bool known = std::find(kAllKeys.begin(), kAllKeys.end(), key) != kAllKeys.end();
    const bool common = std::find(kCommonKeys.begin(), kCommonKeys.end(), key) != kCommonKeys.end();
    if (known && !common && std::find(own.begin(), own.end(), key) == own.end())
      r.ctx().error(r.path_of(key), fmt::format("{} takes no \"{}\" (it takes: {})", probe_noun(kind), key,
                                                fmt::join(own, ", ")), /*at_key=*/true);
  }
}

// Probes know one placeholder, {node.N.addr}: a rank, a port or an output directory means
// nothing to a probe, which belongs to the run and not to a rank.
std::optional<std::string> probe_placeholder_problem(std::string_view text, int nodes) {
  if (auto why = check_placeholders(text, nodes)) return why;
  std::string unknown;
  // A lookup that returns a marker: "{x:sh}" comes back shell-quoted, so quoting shows.
  const std::string marker = "\x01";
  const std::string expanded = expand_placeholders(text, [&](std::string_view name) {
    if (unknown.empty() && !(name.starts_with("node.") && name.ends_with(".addr"))) unknown = name;
    return marker;
  });
  if (!unknown.empty())
    return fmt::format("\"{{{}}}\": a probe knows only {{node.N.addr}}, the address of node N", unknown);
  if (expanded.find(shell_quote(marker)) != std::string::npos)
    return std::string("a probe's placeholders take no :sh (no shell runs a probe)");
  return std::nullopt;
}

void read_url(ObjectReader& r, ProbeSpec& p, int nodes, std::string_view example) {
  r.require("url", example);
  auto url = r.string("url");
  if (!url) return;
  p.url = *url;
  if (auto why = probe_placeholder_problem(*url, nodes)) {
    r.ctx().error(r.path_of("url"), *why);
    return;
  }
  // Checked with each {node.N.addr} as an address would read, so the form is the one sent.
  const std::string sample = expand_placeholders(*url, [](std::string_view) { return std::string("10.0.0.1"); });
  if (auto why = http::url_problem(sample); !why.empty()) r.ctx().error(r.path_of("url"), why);
}

void read_mode(ObjectReader& r, ProbeSpec& p, const std::vector<FaultSpec>& faults) {
  auto mode = r.string("mode");
  if (!mode) return;
  if (*mode == "before") p.mode = ProbeMode::kBefore;
  else if (*mode == "continuous") p.mode = ProbeMode::kContinuous;
  else if (*mode == "after") p.mode = ProbeMode::kAfter;
  else if (mode->starts_with("during:")) {
    p.mode = ProbeMode::kDuring;
    p.during = mode->substr(7);
    const bool known = std::any_of(faults.begin(), faults.end(), [&](const FaultSpec& f) { return f.name == p.during; });
    if (!known) {
      std::vector<std::string_view> names;
      for (const auto& f : faults) names.push_back(f.name);
      r.ctx().error(r.path_of("mode"), names.empty()
                                           ? fmt::format("\"{}\": the scenario has no faults", *mode)
                                           : fmt::format("no fault is named \"{}\" (faults: {})", p.during, fmt::join(names, ", ")));
    }
  } else {
    r.ctx().error(r.path_of("mode"), fmt::format("expected \"before\", \"continuous\", \"during:FAULT\" or \"after\", got \"{}\"", *mode));
  }
}

// interval, and timeout no longer than it (default: the interval). See ProbeSpec::timeout.
void read_timing(ObjectReader& r, ProbeSpec& p) {
  if (auto v = r.duration("interval")) {
    if (v->value < kMinInterval.value || v->value > kMaxInterval.value)
      r.ctx().error(r.path_of("interval"), fmt::format("expected a duration from 100ms to 1h, got {}", common::to_string(*v)));
    else p.interval = *v;
  }
  p.timeout = p.interval;
  if (auto v = r.duration("timeout", /*allow_zero=*/false)) {
    if (v->value > p.interval.value)
      r.ctx().error(r.path_of("timeout"), fmt::format("{} is longer than the interval ({}): an evaluation must be over "
                                                      "before the next is due", common::to_string(*v),
                                                      common::to_string(p.interval)));
    else p.timeout = *v;
  }
}

// min and max in `unit` (a catalogue metric's, or "" for plain numbers).
void read_bounds(ObjectReader& r, ProbeSpec& p, std::string_view unit) {
  if (const json* v = r.raw("min")) p.min = read_limit(r.ctx(), *v, r.path_of("min"), unit);
  if (const json* v = r.raw("max")) p.max = read_limit(r.ctx(), *v, r.path_of("max"), unit);
  if (p.min && p.max && *p.min > *p.max)
    r.ctx().error(r.path(), fmt::format("min ({}) is larger than max ({})", *p.min, *p.max));
}

void require_bound(ObjectReader& r, ProbeKind kind) {
  if (!r.has("min") && !r.has("max"))
    r.ctx().error(r.path(), fmt::format("{} needs \"min\" or \"max\" (or both)", probe_noun(kind)));
}

// Our names are slash-separated ("infer/error_rate"); scraped ones are Prometheus names,
// perhaps renamed, with ':' ("http_requests_total:rate"). Both are fine.
bool metric_name_ok(const std::string& name) {
  if (name.empty() || name.size() > 256 || name.front() == '/' || name.back() == '/' || name.find("//") != std::string::npos)
    return false;
  return std::all_of(name.begin(), name.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == ':' ||
           c == '/' || c == '.' || c == '-';
  });
}

void read_metric(ObjectReader& r, ProbeSpec& p) {
  r.require("metric", "a metric name such as \"infer/error_rate\"");
  require_bound(r, p.kind);
  if (auto m = r.string("metric")) {
    p.metric = *m;
    if (!metric_name_ok(*m))
      r.ctx().error(r.path_of("metric"), fmt::format("expected a metric name such as \"infer/error_rate\" or a scraped "
                                                     "\"http_requests_total:rate\", got \"{}\"", *m));
    else if (m->find('/') != std::string::npos && m->find(':') == std::string::npos)
      warn_uncatalogued_metric(r.ctx(), r.path_of("metric"), *m);
  }
  if (const json* labels = r.raw("labels")) p.labels = read_labels(r.ctx(), *labels, r.path_of("labels"));
  if (auto s = r.choice("stat", kStats)) p.stat = *s;
  if (auto w = r.duration("window", /*allow_zero=*/false)) p.window = *w;
  const auto* spec = common::find_metric(p.metric);
  // count is a number of samples whatever the metric's unit.
  read_bounds(r, p, spec && p.stat != "count" ? spec->unit : std::string_view());
}

std::vector<int> read_statuses(ObjectReader& r) {
  std::vector<int> out;
  const json* v = r.raw("expect_status");
  if (!v) return out;
  if (!v->is_array() || v->empty()) {
    r.ctx().error(r.path_of("expect_status"), fmt::format("expected a non-empty array of HTTP statuses such as [200, 204], "
                                                          "got {}", v->is_array() ? "an empty array" : describe(*v)));
    return out;
  }
  for (std::size_t i = 0; i < v->size(); ++i) {
    auto status = read_integer(r.ctx(), (*v)[i], join_path(r.path_of("expect_status"), i), 100, 599);
    if (status && std::find(out.begin(), out.end(), *status) != out.end())
      r.ctx().error(join_path(r.path_of("expect_status"), i), fmt::format("{} is listed twice", *status));
    else if (status) out.push_back(static_cast<int>(*status));
  }
  return out;
}

void read_http(ObjectReader& r, ProbeSpec& p, int nodes) {
  read_url(r, p, nodes, "the URL to check, such as \"http://{node.0.addr}:8000/v2/health/ready\"");
  p.expect_status = read_statuses(r);
  if (auto f = r.string("json_field")) {
    p.json_field = *f;
    bool valid = !f->empty() && f->front() == '/';
    try {
      if (valid) (void)json::json_pointer(*f);
    } catch (const json::exception&) {
      valid = false;
    }
    if (!valid)
      r.ctx().error(r.path_of("json_field"), fmt::format("expected a JSON pointer such as \"/data/ready\" (RFC 6901: "
                                                         "'/' before each key, ~0 for '~', ~1 for '/'), got \"{}\"", *f));
  }
  p.equals = r.string("equals");
  read_bounds(r, p, "");
  const bool bounded = r.has("min") || r.has("max");
  if ((bounded || r.has("equals")) && !r.has("json_field"))
    r.ctx().error(r.path(), "\"min\", \"max\" and \"equals\" check a field of the answer: give \"json_field\" too");
  if (r.has("json_field") && !bounded && !r.has("equals"))
    r.ctx().error(r.path(), "\"json_field\" needs \"equals\", \"min\" or \"max\": what the field must be");
  if (bounded && r.has("equals"))
    r.ctx().error(r.path(), "give \"equals\" (the field's text) or \"min\"/\"max\" (its number), not both");
}

void read_prometheus(ObjectReader& r, ProbeSpec& p, int nodes) {
  read_url(r, p, nodes, "the Prometheus server's base URL, such as \"http://127.0.0.1:9090\"");
  r.require("query", "a PromQL expression such as \"sum(rate(http_errors_total[30s]))\"");
  require_bound(r, p.kind);
  if (auto q = r.string("query")) {
    p.query = *q;
    if (q->find_first_not_of(" \t\n") == std::string::npos || q->size() > kMaxQueryBytes)
      r.ctx().error(r.path_of("query"), fmt::format("expected a PromQL expression of 1 to {} bytes", kMaxQueryBytes));
  }
  read_bounds(r, p, "");
}

void read_command(ObjectReader& r, ProbeSpec& p, const ClusterSpec& cluster) {
  r.require("argv", "the program and its arguments, such as [\"curl\", \"-sf\", \"http://{node.0.addr}:8000/\"]");
  if (const json* argv = r.raw("argv"))
    p.argv = read_argv(r.ctx(), *argv, r.path_of("argv"),
                       [&](std::string_view a) { return probe_placeholder_problem(a, cluster.nodes); });
  if (runs_agents(cluster.mode))
    r.ctx().error(r.path_of("kind"), "command probes are not supported across hosts yet (cluster.mode runs agents): "
                                     "use an http or prometheus probe");
}

ProbeSpec parse_probe(ParseContext& ctx, const json& value, const std::string& path, const ClusterSpec& cluster,
                      const std::vector<FaultSpec>& faults) {
  ProbeSpec p;
  ObjectReader r(ctx, value, path, kAllKeys);
  if (!r.ok()) return p;
  r.require("name", "a name such as \"error-rate\"");
  r.require("kind", "one of \"metric\", \"http\", \"command\", \"prometheus\"");
  if (auto n = r.string("name")) {
    if (!valid_name(*n))
      ctx.error(r.path_of("name"), fmt::format("expected 1 to 64 of a-z 0-9 . _ -, starting with a letter or digit; got \"{}\"", *n));
    p.name = *n;
  }
  auto kind = r.choice("kind", kKinds);
  if (!kind) return p;  // which keys belong is unknown: the kind's error says enough
  p.kind = kind_from(*kind);
  check_kind_keys(r, value, p.kind);
  read_mode(r, p, faults);
  read_timing(r, p);
  if (p.kind != ProbeKind::kMetric)
    if (auto n = r.integer("node", 0, cluster.nodes - 1)) p.node = static_cast<int>(*n);
  switch (p.kind) {
    case ProbeKind::kMetric: read_metric(r, p); break;
    case ProbeKind::kHttp: read_http(r, p, cluster.nodes); break;
    case ProbeKind::kCommand: read_command(r, p, cluster); break;
    case ProbeKind::kPrometheus: read_prometheus(r, p, cluster.nodes); break;
  }
  // A steady-state probe gates faults; without any it gates nothing, but a scenario whose
  // faults were taken out (--set faults=[] for a baseline run) is still a sound one.
  if (p.mode == ProbeMode::kBefore && faults.empty())
    ctx.warning(r.path_of("mode"), "a \"before\" probe gates the faults and this scenario has none: it is only reported");
  return p;
}

}  // namespace

std::vector<ProbeSpec> parse_probes(ParseContext& ctx, const json& value, const ClusterSpec& cluster,
                                    const std::vector<FaultSpec>& faults) {
  std::vector<ProbeSpec> out;
  if (!value.is_array()) {
    ctx.error("probes", fmt::format("expected an array of probes, got {}", describe(value)));
    return out;
  }
  std::set<std::string> names;
  for (std::size_t i = 0; i < value.size(); ++i) {
    const std::string path = join_path("probes", i);
    ProbeSpec p = parse_probe(ctx, value[i], path, cluster, faults);
    if (!p.name.empty() && !names.insert(p.name).second)
      ctx.error(join_path(path, "name"), fmt::format("two probes are named \"{}\"", p.name));
    out.push_back(std::move(p));
  }
  return out;
}

AbortSpec parse_abort(ParseContext& ctx, const json& value, const std::vector<ProbeSpec>& probes) {
  AbortSpec a;
  ObjectReader r(ctx, value, "abort", {"when", "for"});
  if (!r.ok()) return a;
  r.require("when", "the names of the probes whose failure stops the run, such as [\"error-rate\"]");
  if (auto d = r.duration("for")) a.for_ = *d;
  const json* when = r.raw("when");
  if (!when) return a;
  std::vector<std::string_view> names;
  for (const auto& p : probes) names.push_back(p.name);
  if (!when->is_array() || when->empty()) {
    ctx.error(r.path_of("when"), fmt::format("expected a non-empty array of probe names, got {}",
                                             when->is_array() ? "an empty array" : describe(*when)));
    return a;
  }
  for (std::size_t i = 0; i < when->size(); ++i) {
    const json& w = (*when)[i];
    const std::string path = join_path(r.path_of("when"), i);
    if (!w.is_string()) {
      ctx.error(path, fmt::format("expected a probe's name, got {}", describe(w)));
      continue;
    }
    const auto& name = w.get_ref<const std::string&>();
    if (std::find(a.when.begin(), a.when.end(), name) != a.when.end())
      ctx.error(path, fmt::format("\"{}\" is listed twice", name));
    else if (std::find(names.begin(), names.end(), name) == names.end())
      ctx.error(path, names.empty() ? fmt::format("no probe is named \"{}\": the scenario has no probes", name)
                                    : fmt::format("no probe is named \"{}\"{} (probes: {})", name,
                                                  suggestion_suffix(name, names), fmt::join(names, ", ")));
    else a.when.push_back(name);
  }
  return a;
}

}  // namespace chaosbench::harness
