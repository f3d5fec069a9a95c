// scrape: the Prometheus/OpenMetrics endpoints read during the run (scrape_spec.h).
// Everything a scrape could fail on for its form is found here, so the run only ever
// meets endpoints that are down or answer badly.
#include <fmt/format.h>

#include "common/metrics/metric_name.h"
#include "harness/http/http_client.h"
#include "harness/exposition/metric_filter.h"
#include "harness/scenario/placeholders.h"
#include "harness/scenario/scenario_parts.h"

namespace chaosbench::harness {
namespace {

constexpr auto kMinEvery = std::chrono::milliseconds(100);
constexpr std::size_t kMaxScrapes = 64;

// The URL's form, and placeholders: only {node.N.addr} means something to a scrape.
void read_scrape_url(ParseContext& ctx, ObjectReader& r, const ClusterSpec& cluster, ScrapeSpec& s) {
  auto url = r.string("url");
  if (!url) return;
  s.url = *url;
  const std::string path = r.path_of("url");
  if (auto bad = check_placeholders(*url, cluster.nodes)) return ctx.error(path, *bad);
  std::string other;
  const std::string probe = expand_placeholders(*url, [&](std::string_view name) {
    if (!(name.starts_with("node.") && name.ends_with(".addr")) && other.empty()) other = name;
    return std::string("127.0.0.1");
  });
  if (!other.empty())
    return ctx.error(path, fmt::format("\"{{{}}}\" means nothing to a scrape; it may name {{node.N.addr}} only", other));
  if (auto why = http::url_problem(probe); !why.empty()) ctx.error(path, why);
}

void read_metrics(ParseContext& ctx, const json& v, const std::string& path, ScrapeSpec& s) {
  if (!v.is_array()) return ctx.error(path, fmt::format("expected an array of metric names or \"/regex/\", got {}", describe(v)));
  for (std::size_t i = 0; i < v.size(); ++i) {
    const std::string p = join_path(path, i);
    if (!v[i].is_string()) {
      ctx.error(p, fmt::format("expected a metric name or \"/regex/\", got {}", describe(v[i])));
      continue;
    }
    const auto& entry = v[i].get_ref<const std::string&>();
    if (prometheus::MetricFilter::is_regex(entry)) {
      if (auto why = prometheus::MetricFilter::regex_problem(entry))
        ctx.error(p, fmt::format("the regex does not compile: {}", *why));
    } else if (!common::is_prometheus_metric_name(entry)) {
      ctx.error(p, fmt::format("\"{}\" is neither a Prometheus metric name ([a-zA-Z_:][a-zA-Z0-9_:]*) nor a \"/regex/\"",
                               entry));
    }
    s.metrics.push_back(entry);
  }
}

void read_rename(ParseContext& ctx, const json& v, const std::string& path, ScrapeSpec& s) {
  if (!v.is_object())
    return ctx.error(path, fmt::format("expected an object of metric names to new names, such as "
                                       "{{\"node_load1\": \"node/load1\"}}, got {}", describe(v)));
  for (const auto& [from, to] : v.items()) {
    const std::string p = join_path(path, from);
    if (!common::is_prometheus_metric_name(from)) {
      ctx.error(p, fmt::format("\"{}\" is not a Prometheus metric name", from), true);
      continue;
    }
    if (!to.is_string() || !common::is_metric_name(to.get<std::string>())) {
      ctx.error(p, fmt::format("expected a metric name such as \"node/load1\" or \"node_load1\", got {}", describe(to)));
      continue;
    }
    s.rename[from] = to.get<std::string>();
  }
}

ScrapeSpec parse_one(ParseContext& ctx, const json& value, const std::string& path, const ClusterSpec& cluster) {
  ScrapeSpec s;
  ObjectReader r(ctx, value, path, {"url", "every", "timeout", "metrics", "rename", "node"});
  if (!r.ok()) return s;
  r.require("url", "the endpoint, such as \"http://{node.0.addr}:9100/metrics\"");
  read_scrape_url(ctx, r, cluster, s);
  if (auto v = r.duration("every", /*allow_zero=*/false)) {
    if (v->value < kMinEvery) ctx.error(r.path_of("every"), "a scrape runs at most every 100ms");
    else s.every = *v;
  }
  // A timeout longer than `every` is fine: a slow scrape skips the ticks it overran.
  if (auto v = r.duration("timeout", /*allow_zero=*/false)) s.timeout = *v;
  if (const json* m = r.raw("metrics")) read_metrics(ctx, *m, r.path_of("metrics"), s);
  if (const json* m = r.raw("rename")) read_rename(ctx, *m, r.path_of("rename"), s);
  if (auto v = r.integer("node", -1, cluster.nodes - 1)) s.node = static_cast<int>(*v);
  return s;
}

}  // namespace

std::vector<ScrapeSpec> parse_scrapes(ParseContext& ctx, const json& value, const ClusterSpec& cluster) {
  std::vector<ScrapeSpec> out;
  if (!value.is_array()) {
    ctx.error("scrape", fmt::format("expected an array of scrape targets, got {}", describe(value)));
    return out;
  }
  if (value.size() > kMaxScrapes) {
    ctx.error("scrape", fmt::format("{} targets; a run scrapes at most {}", value.size(), kMaxScrapes));
    return out;
  }
  for (std::size_t i = 0; i < value.size(); ++i) out.push_back(parse_one(ctx, value[i], join_path("scrape", i), cluster));
  return out;
}

}  // namespace chaosbench::harness
