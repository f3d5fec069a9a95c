#include "harness/derive/result_builder.h"

#include <algorithm>

#include <fmt/format.h>
#include <sys/utsname.h>
#include <thread>
#include <unistd.h>

#include "harness/derive/aggregator.h"
#include "harness/derive/check_evaluator.h"
#include "harness/derive/diagnosis_derivation.h"
#include "harness/derive/host_fingerprint.h"
#include "harness/derive/probe_derivation.h"
#include "harness/derive/train_derivation.h"
#include "harness/derive/train_events.h"
#include "harness/workloads/workload_plan.h"

namespace chaosbench::harness {

reports::Environment describe_environment() {
  reports::Environment env;
  char host[256] = {};
  if (::gethostname(host, sizeof(host) - 1) == 0) env.host = host;
  utsname u{};
  if (::uname(&u) == 0) env.kernel = fmt::format("{} {}", u.sysname, u.release);
  env.cpus = static_cast<int>(std::thread::hardware_concurrency());
  env.cluster = "local processes";
  add_host_fingerprint(env);
  return env;
}

reports::RunResult build_result(const ResultInputs& in, const reports::Judgement& verdict) {
  reports::RunResult r;
  r.tool_version = CHAOSBENCH_VERSION;
  reports::set_scenario(r, in.scenario.resolved_json);
  r.scenario_name = in.scenario.name;
  r.environment = describe_environment();
  r.environment.scenario_hash = sha256_hex(in.scenario.resolved_json);
  for (const auto& f : in.faults)
    if (!f.backend.empty()) r.environment.backends[f.type] = f.backend;
  r.seed = in.scenario.seed;
  r.started_at = in.started_at;
  r.duration_s = in.end_s;
  r.phases = build_phases(in.schedule, in.scenario.faults, in.end_s);
  r.faults = in.faults;
  r.processes = in.processes;

  auto samples = in.store.samples();
  r.metrics = aggregate(samples, in.t0_wall, r.phases);
  const auto events = in.store.events();
  // What the workload's kind says of what it ran on (workload_plan.h).
  const auto workload = make_workload_plan(in.scenario);
  const auto world = trained_world(events, in.t0_wall, in.scenario.cluster.world_size());
  for (auto& [side, words] : workload->backends(world)) r.environment.backends[side] = std::move(words);
  const TrainingInputs training{events, samples, in.t0_wall, in.end_s, r.phases, in.faults, workload->target_loss()};
  for (auto& m : derive_training_metrics(training)) r.metrics.push_back(std::move(m));
  for (const auto& f : in.faults) {
    if (!f.apply_latency_us) continue;
    reports::MetricRecord m{"fault/apply_latency", "us", common::Better::kLower,
                            {{"phase", std::string("overall")}, {"fault", f.name},
                             {"occurrence", static_cast<std::int64_t>(f.occurrence)}},
                            *f.apply_latency_us, std::nullopt};
    r.metrics.push_back(std::move(m));
    auto err = f.effect.find("effect_error_pct");
    if (err == f.effect.end()) continue;
    r.metrics.push_back({"fault/effect_error", "%", common::Better::kLower,
                         {{"phase", std::string("overall")}, {"fault", f.name},
                          {"occurrence", static_cast<std::int64_t>(f.occurrence)}},
                         err->second, std::nullopt});
  }
  r.series = build_series(samples, in.t0_wall);
  for (const auto& e : events) {
    if (e.event.name == "step") continue;  // their numbers are in the series
    r.events.push_back({e.event.time - in.t0_wall, e.event.rank, e.event.name, to_report_labels(e.event.fields)});
  }
  std::stable_sort(r.events.begin(), r.events.end(), [](const auto& a, const auto& b) { return a.t < b.t; });
  for (auto& m : diagnosis_metrics(r.events, r.faults, in.diagnosed)) r.metrics.push_back(std::move(m));
  r.probes = in.probes;
  r.abort = in.abort;
  for (auto& m : probe_metrics(r.probes, r.abort)) r.metrics.push_back(std::move(m));
  r.checks = evaluate_checks(in.scenario.checks, r.metrics);

  r.protocol.samples = in.store.sample_count();
  r.protocol.events = in.store.event_count();
  r.protocol.malformed = in.malformed;
  r.protocol.malformed_examples = in.malformed_examples;

  reports::judge_result(r, verdict);
  return r;
}

}  // namespace chaosbench::harness
