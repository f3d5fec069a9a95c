#include "harness/run/scrape_collector.h"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "harness/run/run_environment.h"
#include "harness/scenario/placeholders.h"

namespace chaosbench::harness {
namespace {

using TL = TimelineLog;

std::vector<prometheus::ScrapeTarget> scrape_targets(const RunContext& ctx) {
  NodeSite& site = ctx.env->site();
  std::vector<prometheus::ScrapeTarget> targets;
  for (const auto& spec : ctx.scenario.scrape) {
    prometheus::ScrapeTarget t;
    t.spec = spec;
    // {node.N.addr} as the site reaches node N (the parser let no other placeholder through).
    t.url = expand_node_addresses(spec.url, [&site](int node) { return site.address(node); });
    t.netns_fd = spec.node >= 0 ? site.netns_fd(spec.node) : -1;
    t.instance = prometheus::instance_of(t.url);
    targets.push_back(std::move(t));
  }
  return targets;
}

}  // namespace

void ScrapeCollector::at(Stage stage, const RunContext& ctx) {
  if (stage != Stage::kWorkload || ctx.scenario.scrape.empty()) return;
  ctx_ = &ctx;
  prometheus::ScrapeHooks hooks;
  hooks.sample = [take = ctx.take_record](const bench::Sample& s) { take(s, s.time); };
  const RunContext* c = &ctx;
  hooks.state = [c](const prometheus::ScrapeTarget& t, bool up, const std::string& why, std::uint64_t failures) {
    std::vector<TimelineField> fields{{"url", TL::str(t.url)}, {"instance", TL::str(t.instance)},
                                      {"failures", TL::num(static_cast<double>(failures))}};
    if (!up) fields.emplace_back("error", TL::str(why));
    c->env->timeline().write(bench::wall_time_now() - c->t0_wall, up ? "scrape_up" : "scrape_down", fields);
    if (!up) spdlog::warn("scrape {} is down: {}", t.url, why);
  };
  scraper_ = std::make_unique<prometheus::Scraper>(scrape_targets(ctx), std::move(hooks));
  scraper_->start();
}

// Each target's count goes to the log and the timeline.
void ScrapeCollector::stop() {
  if (!scraper_) return;
  scraper_->stop();
  for (const auto& s : scraper_->stats()) {
    ctx_->env->timeline().write(ctx_->now_s(), "scrape_stats",
                                {{"url", TL::str(s.url)},
                                 {"scrapes", TL::num(static_cast<double>(s.scrapes))},
                                 {"failures", TL::num(static_cast<double>(s.failures))},
                                 {"pending_failures", TL::num(static_cast<double>(s.pending_failures))},
                                 {"dropped_series", TL::num(static_cast<double>(s.dropped_series))}});
    if (!s.ever_up)
      spdlog::warn("scrape {} never answered with metrics ({} tries; last: {})", s.url, s.scrapes,
                   s.last_error.empty() ? "none" : s.last_error);
    else if (s.failures > 0)
      spdlog::warn("scrape {}: {} of {} scrapes failed (last: {})", s.url, s.failures, s.scrapes, s.last_error);
  }
  scraper_.reset();
}

}  // namespace chaosbench::harness
