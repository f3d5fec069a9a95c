// See scraper.h.
#include "harness/prometheus/scraper.h"

#include <chrono>
#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "common/kernel/netns.h"
#include "harness/http/http_client.h"
#include "harness/exposition/exposition_parser.h"
#include "harness/prometheus/scrape_converter.h"

namespace chaosbench::harness::prometheus {
namespace {

enum class TargetState { kPending, kUp, kDown };

}  // namespace

struct Scraper::Worker {
  Worker(ScrapeTarget t) : target(std::move(t)), converter(target.spec, target.instance) { stats.url = target.url; }
  ScrapeTarget target;
  ScrapeConverter converter;
  TargetState state = TargetState::kPending;
  bool warned_dropped = false;
  mutable std::mutex stats_mutex;
  ScrapeStats stats;  // under stats_mutex
  std::thread thread;
};

std::string instance_of(const std::string& url) {
  const auto scheme_end = url.find("://");
  const std::size_t start = scheme_end == std::string::npos ? 0 : scheme_end + 3;
  std::size_t end = url.find_first_of("/?#", start);
  std::string authority = url.substr(start, end == std::string::npos ? std::string::npos : end - start);
  if (auto at = authority.rfind('@'); at != std::string::npos) authority.erase(0, at + 1);  // user:password@
  const auto colon = authority.rfind(':');
  const auto bracket = authority.rfind(']');  // [::1]:9100
  const bool has_port = colon != std::string::npos && (bracket == std::string::npos || colon > bracket);
  if (!has_port) authority += url.starts_with("https://") ? ":443" : ":80";
  return authority;
}

Scraper::Scraper(std::vector<ScrapeTarget> targets, ScrapeHooks hooks) : hooks_(std::move(hooks)) {
  for (auto& t : targets) workers_.push_back(std::make_unique<Worker>(std::move(t)));
}

Scraper::~Scraper() { stop(); }

void Scraper::start() {
  for (auto& w : workers_) {
    Worker& worker = *w;
    worker.thread = std::thread([this, &worker] { run(worker); });
  }
}

void Scraper::stop() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  wake_.notify_all();
  for (auto& w : workers_)
    if (w->thread.joinable()) w->thread.join();
}

std::vector<ScrapeStats> Scraper::stats() const {
  std::vector<ScrapeStats> out;
  for (const auto& w : workers_) {
    std::lock_guard lock(w->stats_mutex);
    out.push_back(w->stats);
  }
  return out;
}

// The target's thread: into the node's namespace for good (the thread serves only this
// target), then one scrape every `every`, on a fixed grid; a scrape that overran skips
// the missed ticks rather than bursting.
void Scraper::run(Worker& w) {
  if (w.target.netns_fd >= 0) {
    try {
      common::enter_netns(w.target.netns_fd);
    } catch (const std::exception& e) {
      spdlog::warn("scrape {}: cannot enter node {}'s network namespace: {}", w.target.url, w.target.spec.node, e.what());
      std::lock_guard lock(w.stats_mutex);
      w.stats.last_error = e.what();
      return;
    }
  }
  const auto every = std::chrono::duration_cast<std::chrono::steady_clock::duration>(w.target.spec.every.value);
  auto next = std::chrono::steady_clock::now();
  while (true) {
    {
      std::unique_lock lock(mutex_);
      if (wake_.wait_until(lock, next, [this] { return stopping_; })) return;
    }
    try {
      scrape_once(w);
    } catch (const std::exception& e) {  // a hook that failed (out of memory): the run goes on
      spdlog::warn("scrape {}: {}", w.target.url, e.what());
    }
    const auto now = std::chrono::steady_clock::now();
    next += every;
    while (next <= now) next += every;
  }
}

void Scraper::scrape_once(Worker& w) {
  http::Request request;
  request.url = w.target.url;
  request.timeout = std::chrono::duration_cast<std::chrono::milliseconds>(w.target.spec.timeout.value);
  request.headers = {{"Accept", std::string(kAcceptHeader)}};
  std::string why;
  std::vector<MetricFamily> families;
  const http::Response response = http::fetch(request);
  const double time = bench::wall_time_now();
  if (!response.answered()) why = response.error;
  else if (response.status != 200) why = fmt::format("HTTP status {}", response.status);
  else {
    try {
      families = parse_exposition(response.body, format_of_content_type(response.content_type));
    } catch (const ExpositionError& e) {
      why = fmt::format("malformed exposition at {}", e.what());
    }
  }
  const bool ok = why.empty();
  ConvertedScrape converted;
  if (ok) converted = w.converter.convert(families, time);
  std::uint64_t failures = 0;
  {
    std::lock_guard lock(w.stats_mutex);
    ++w.stats.scrapes;
    if (!ok) {
      ++(w.state == TargetState::kPending ? w.stats.pending_failures : w.stats.failures);
      w.stats.last_error = why;
    }
    w.stats.dropped_series += converted.dropped_series;
    w.stats.ever_up = w.stats.ever_up || ok;
    failures = w.stats.failures;
  }
  if (converted.dropped_series > 0 && !w.warned_dropped) {
    w.warned_dropped = true;
    spdlog::warn("scrape {}: {} series beyond the limit of {} are left out (narrow it with \"metrics\")", w.target.url,
                 converted.dropped_series, ScrapeConverter::kDefaultMaxSeries);
  }
  for (const auto& s : converted.samples) hooks_.sample(s);
  const TargetState before = w.state;
  if (ok) w.state = TargetState::kUp;
  else if (before == TargetState::kUp) w.state = TargetState::kDown;
  if (w.state != before && hooks_.state) hooks_.state(w.target, ok, why, failures);
  if (w.state == TargetState::kPending) return;
  bench::Sample up{-1, time, "scrape/up", ok ? 1.0 : 0.0, "", {{"instance", w.target.instance}}};
  hooks_.sample(up);
  bench::Sample duration{-1, time, "scrape/duration", response.elapsed_s, "s", {{"instance", w.target.instance}}};
  hooks_.sample(duration);
}

}  // namespace chaosbench::harness::prometheus
