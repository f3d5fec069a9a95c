#include "harness/derive/train_events.h"

#include <algorithm>
#include <cmath>

#include "common/metrics/metric_catalogue.h"
#include "reports/model/text_format.h"

namespace chaosbench::harness {
namespace {

// A whole number in ±2^53 (a double holds those exactly), else 0: what a workload sends
// is never cast out of range.
std::int64_t int_field(const bench::Labels& fields, const char* key) {
  const double v = reports::label_number(fields, key).value_or(0);
  constexpr double kLimit = 9007199254740992.0;  // 2^53
  return std::isfinite(v) && std::abs(v) <= kLimit ? static_cast<std::int64_t>(v) : 0;
}

// The position when the event carries all six fields and they fit together; a partial
// or inconsistent one leaves the rank a data-parallel one, whose report is unchanged.
std::optional<ParallelPosition> parallel_position(const bench::Labels& f) {
  for (const char* key : {"tp_rank", "pp_stage", "dp_rank", "tp", "pp", "dp"})
    if (!reports::label_number(f, key)) return std::nullopt;
  ParallelPosition p{int_field(f, "tp_rank"), int_field(f, "pp_stage"), int_field(f, "dp_rank"),
                     int_field(f, "tp"),      int_field(f, "pp"),       int_field(f, "dp")};
  if (!p.valid()) return std::nullopt;
  return p;
}

template <typename T>
void sort_by_time(std::vector<T>& v) {
  std::stable_sort(v.begin(), v.end(), [](const T& a, const T& b) { return a.t < b.t; });
}

}  // namespace

TrainTimeline read_train_events(const std::vector<StoredEvent>& events, double t0_wall) {
  TrainTimeline tl;
  for (const auto& stored : events) {
    const auto& e = stored.event;
    const auto& f = e.fields;
    const double t = (e.time > 0 ? e.time : stored.received_at) - t0_wall;
    if (e.name == "step") {
      if (!reports::label_number(f, "step")) continue;
      StepEvent s;
      s.rank = e.rank;
      s.t = t;
      s.step = int_field(f, "step");
      s.step_ms = reports::label_number(f, "step_ms");
      s.compute_ms = reports::label_number(f, "compute_ms");
      s.comm_ms = reports::label_number(f, "comm_ms");
      s.comm_total_ms = reports::label_number(f, "comm_total_ms");
      s.samples = reports::label_number(f, "samples");
      s.loss = reports::label_number(f, "loss");
      s.flops = reports::label_number(f, "flops");
      s.attempt = int_field(f, "attempt");
      s.generation = int_field(f, "generation");
      s.parallel = parallel_position(f);
      if (s.parallel) {
        s.stage_ms = reports::label_number(f, "stage_ms");
        s.bubble_pct = reports::label_number(f, "bubble_pct");
      }
      tl.steps.push_back(s);
    } else if (e.name == "train_start") {
      tl.starts.push_back({e.rank, t, int_field(f, "step"), int_field(f, "world"), int_field(f, "attempt"),
                           int_field(f, "generation"), reports::label_value(f, "reason")});
    } else if (e.name == "checkpoint_saved") {
      tl.saves.push_back({e.rank, t, int_field(f, "step"), reports::label_number(f, "blocking_ms").value_or(0)});
    } else if (e.name == "checkpoint_restored") {
      tl.restores.push_back({e.rank, t, int_field(f, "step"), reports::label_number(f, "ms").value_or(0)});
    } else if (e.name == "failure_detected") {
      tl.failures.push_back({e.rank, t});
      if (int_field(f, "xid") > 0) tl.xids.push_back({e.rank, t, int_field(f, "xid"), int_field(f, "code")});
    } else if (e.name == "fault_injected" && reports::label_value(f, "kind") == "gpu.bitflip") {
      tl.bitflips.push_back({e.rank, t, int_field(f, "step"), reports::label_value(f, "tensor")});
    } else if (e.name == "sdc_detected") {
      tl.sdc_detections.push_back({e.rank, t, int_field(f, "step"), ""});
    } else if (e.name == "restart" && e.rank == kHarnessRank) {
      tl.restarts.push_back({e.rank, t});
    }
  }
  sort_by_time(tl.steps);
  sort_by_time(tl.starts);
  sort_by_time(tl.saves);
  sort_by_time(tl.restores);
  sort_by_time(tl.failures);
  sort_by_time(tl.restarts);
  sort_by_time(tl.bitflips);
  sort_by_time(tl.sdc_detections);
  return tl;
}

reports::MetricRecord catalogue_record(const char* name, reports::Labels labels, double value,
                                       std::optional<reports::Stats> stats) {
  const auto* spec = common::find_metric(name);
  return reports::MetricRecord{name, spec ? std::string(spec->unit) : std::string(),
                               spec ? spec->better : common::Better::kNone,
                               std::move(labels), value, stats};
}

reports::Labels phase_labels(const std::string& phase) { return {{"phase", phase}}; }

std::int64_t trained_world(const std::vector<StoredEvent>& events, double t0_wall, std::int64_t planned) {
  std::int64_t most = 0;
  for (const auto& start : read_train_events(events, t0_wall).starts) most = std::max(most, start.world);
  return most > 0 ? most : planned;
}

}  // namespace chaosbench::harness
