#include "harness/run/grafana_collector.h"

#include <cmath>
#include <cstdlib>
#include <spdlog/spdlog.h>

#include "harness/run/run_environment.h"

namespace chaosbench::harness {
namespace {

using TL = TimelineLog;

// How long the end of a run waits for Grafana to take what is still queued.
constexpr auto kAnnotationDrain = std::chrono::seconds(5);

}  // namespace

void GrafanaCollector::at(Stage stage, const RunContext& ctx) {
  if (stage != Stage::kBringUp || ctx.options.grafana_url.empty()) return;
  ctx_ = &ctx;
  grafana::GrafanaSettings settings;
  settings.url = ctx.options.grafana_url;
  settings.dashboard_uid = ctx.options.grafana_dashboard;
  if (const char* token = std::getenv(grafana::kTokenEnv); token && *token) settings.token = token;
  else spdlog::warn("--grafana: {} is not set: annotations go without authorization", grafana::kTokenEnv);
  // On the poster's thread: the timeline and the live state are thread-safe; now_s() is not.
  const RunContext* c = &ctx;
  poster_ = std::make_unique<grafana::AnnotationPoster>(std::move(settings), [c](const std::string& what) {
    c->live.annotation_failed();
    c->env->timeline().write(bench::wall_time_now() - c->t0_wall, "grafana_annotation_failed", {{"error", TL::str(what)}});
  });
}

void GrafanaCollector::on_fault(const FaultTransition& t) {
  if (!poster_) return;
  const reports::FaultRecord& rec = *t.record;
  const auto ms = static_cast<std::int64_t>(std::llround((ctx_->t0_wall + t.t_s) * 1000.0));
  if (!t.active) return poster_->ended(t.occurrence, ms);
  poster_->started(t.occurrence,
                   {rec.name, rec.type, rec.targets, rec.occurrence, ctx_->run_id, ctx_->scenario.name, ms, ms});
}

void GrafanaCollector::stop() {
  if (!poster_) return;
  poster_->finish(kAnnotationDrain);
  ctx_->env->timeline().write(ctx_->now_s(), "grafana_annotations",
                              {{"sent", TL::num(static_cast<double>(poster_->sent()))},
                               {"failed", TL::num(static_cast<double>(poster_->failures()))}});
  poster_.reset();
}

}  // namespace chaosbench::harness
