#include "harness/run/listener_collector.h"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "harness/core/host_error.h"
#include "harness/prometheus/live_exposition.h"
#include "harness/run/run_environment.h"

namespace chaosbench::harness {

void ListenerCollector::at(Stage stage, const RunContext& ctx) {
  if (ctx.options.metrics_listen.empty()) return;
  if (stage == Stage::kFirst) {
    try {
      listener_ = std::make_unique<prometheus::MetricsListener>(
          prometheus::parse_listen_address(ctx.options.metrics_listen), [this, &ctx] { return render(ctx); });
    } catch (const std::invalid_argument& e) {
      throw HostError(e.what());  // the CLI checked the form; only a caller of the library gets here
    } catch (const std::runtime_error& e) {
      throw HostError(fmt::format("--metrics-listen: {}", e.what()));
    }
    spdlog::info("serving the run's live state at http://{}/metrics", listener_->address());
  } else if (stage == Stage::kBringUp) {
    ctx.env->timeline().write(ctx.now_s(), "metrics_listening", {{"address", TimelineLog::str(listener_->address())}});
  }
}

// On the listener's thread: copies of the live state and the newest values, then text.
std::string ListenerCollector::render(const RunContext& ctx) const {
  const LiveSnapshot live = ctx.live.snapshot();
  const std::vector<LatestSample> latest = ctx.store.latest();
  return prometheus::render_live_exposition(
      {live, latest, bench::wall_time_now() - ctx.t0_wall, ctx.store.sample_count(), ctx.store.event_count()});
}

}  // namespace chaosbench::harness
