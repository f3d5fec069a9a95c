// The run's Prometheus scrapes (scenario "scrape", harness/prometheus/scraper.h): started
// with the workload, stopped in the unwind once the faults are reverted (a scrape in
// flight must not delay a revert) and before the targets stop, so the series never record
// the harness stopping the targets.
#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "harness/run/run.h"
#include "harness/scenario/placeholders.h"

namespace chaosbench::harness {
namespace {

using TL = TimelineLog;

}  // namespace

void Run::start_scraper() {
  if (scenario_.scrape.empty()) return;
  NodeSite& site = env_->site();
  std::vector<prometheus::ScrapeTarget> targets;
  for (const auto& spec : scenario_.scrape) {
    prometheus::ScrapeTarget t;
    t.spec = spec;
    // {node.N.addr} as the site reaches node N (the parser let no other placeholder through).
    t.url = expand_node_addresses(spec.url, [&site](int node) { return site.address(node); });
    t.netns_fd = spec.node >= 0 ? site.netns_fd(spec.node) : -1;
    t.instance = prometheus::instance_of(t.url);
    targets.push_back(std::move(t));
  }
  prometheus::ScrapeHooks hooks;
  hooks.sample = [this](const bench::Sample& s) { take_record(s, s.time); };
  hooks.state = [this](const prometheus::ScrapeTarget& t, bool up, const std::string& why, std::uint64_t failures) {
    std::vector<TimelineField> fields{{"url", TL::str(t.url)}, {"instance", TL::str(t.instance)},
                                      {"failures", TL::num(static_cast<double>(failures))}};
    if (!up) fields.emplace_back("error", TL::str(why));
    env_->timeline().write(bench::wall_time_now() - t0_wall_, up ? "scrape_up" : "scrape_down", fields);
    if (!up) spdlog::warn("scrape {} is down: {}", t.url, why);
  };
  scraper_ = std::make_unique<prometheus::Scraper>(std::move(targets), std::move(hooks));
  scraper_->start();
}

// Failed scrapes are warnings, never a failed run: each target's count goes to the log
// and the timeline.
void Run::stop_scraper() {
  if (!scraper_) return;
  scraper_->stop();
  for (const auto& s : scraper_->stats()) {
    env_->timeline().write(now_s(), "scrape_stats", {{"url", TL::str(s.url)},
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
}

}  // namespace chaosbench::harness
