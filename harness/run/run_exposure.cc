// The run's live state and its readers outside the run (see run.h): the --metrics-listen
// listener, which renders LiveStatus and the store's newest values on each scrape, and the
// --grafana poster, which gets each fault occurrence's start and end from the fault
// driver's observer. Both are optional and neither can fail a run once it started: a port
// in use is exit 3 before anything is made; a failed annotation is a warning.
#include <cmath>
#include <cstdlib>
#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "harness/core/host_error.h"
#include "harness/prometheus/live_exposition.h"
#include "harness/run/run.h"

namespace chaosbench::harness {
namespace {

using TL = TimelineLog;

// How long the end of a run waits for Grafana to take what is still queued.
constexpr auto kAnnotationDrain = std::chrono::seconds(5);

}  // namespace

void Run::start_listener() {
  if (options_.metrics_listen.empty()) return;
  try {
    listener_ = std::make_unique<prometheus::MetricsListener>(prometheus::parse_listen_address(options_.metrics_listen),
                                                              [this] { return render_exposition(); });
  } catch (const std::invalid_argument& e) {
    throw HostError(e.what());  // the CLI checked the form; only a caller of the library gets here
  } catch (const std::runtime_error& e) {
    throw HostError(fmt::format("--metrics-listen: {}", e.what()));
  }
  spdlog::info("serving the run's live state at http://{}/metrics", listener_->address());
}

// Once the timeline exists: where the listener is, and the Grafana poster.
void Run::start_live_outputs() {
  if (listener_)
    env_->timeline().write(now_s(), "metrics_listening", {{"address", TL::str(listener_->address())}});
  if (options_.grafana_url.empty()) return;
  grafana::GrafanaSettings settings;
  settings.url = options_.grafana_url;
  settings.dashboard_uid = options_.grafana_dashboard;
  if (const char* token = std::getenv(grafana::kTokenEnv); token && *token) settings.token = token;
  else spdlog::warn("--grafana: {} is not set: annotations go without authorization", grafana::kTokenEnv);
  // On the poster's thread: the timeline and live_ are thread-safe; now_s() is not (t0_).
  grafana_ = std::make_unique<grafana::AnnotationPoster>(std::move(settings), [this](const std::string& what) {
    live_.annotation_failed();
    env_->timeline().write(bench::wall_time_now() - t0_wall_, "grafana_annotation_failed", {{"error", TL::str(what)}});
  });
}

// The fault driver's observer (run's thread): each applied or reverted occurrence reaches
// the live state, Grafana and the `during` probes.
void Run::on_fault_transition(const FaultTransition& t) {
  const reports::FaultRecord& rec = *t.record;
  if (t.active) live_.fault_applied(t.fault, rec.targets);
  else live_.fault_reverted(t.fault);
  if (probes_) probes_->fault_active(scenario_.faults[t.fault].name, t.active);  // `during` probes
  if (!grafana_) return;
  const auto ms = static_cast<std::int64_t>(std::llround((t0_wall_ + t.t_s) * 1000.0));
  if (!t.active) return grafana_->ended(t.occurrence, ms);
  grafana_->started(t.occurrence, {rec.name, rec.type, rec.targets, rec.occurrence, run_id_, scenario_.name, ms, ms});
}

// On the listener's thread: copies of the live state and the newest values, then text.
std::string Run::render_exposition() const {
  const LiveSnapshot live = live_.snapshot();
  const std::vector<LatestSample> latest = store_.latest();
  return prometheus::render_live_exposition(
      {live, latest, bench::wall_time_now() - t0_wall_, store_.sample_count(), store_.event_count()});
}

void Run::finish_annotations() {
  if (!grafana_) return;
  grafana_->finish(kAnnotationDrain);
  env_->timeline().write(now_s(), "grafana_annotations", {{"sent", TL::num(static_cast<double>(grafana_->sent()))},
                                                          {"failed", TL::num(static_cast<double>(grafana_->failures()))}});
}

}  // namespace chaosbench::harness
