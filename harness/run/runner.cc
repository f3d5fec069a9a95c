// The run's steps (see run.h): the metrics intake, starting the workload and its ranks,
// faults as they come due, and judging every exit.
#include "harness/run/runner.h"

#include <algorithm>
#include <csignal>
#include <cstdlib>
#include <filesystem>
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <spdlog/spdlog.h>

#include "common/process/program_path.h"
#include "common/gpu/control_block.h"
#include "common/json/store_wire.h"
#include "faults/registry/registry.h"
#include "harness/cluster/netns_cluster.h"
#include "harness/core/host_error.h"
#include "harness/run/run.h"
#include "harness/process/signal_guard.h"
#include "harness/plan/workload_blas.h"

namespace chaosbench::harness {
namespace {

namespace fs = std::filesystem;
using TL = TimelineLog;

}  // namespace

// "  12.3s  fault:slow-link  step 152/400  ETA 25s" for the status line.
std::string Run::progress_text(double t) const {
  const auto active = faults_->active_names();
  std::string text = fmt::format("{:7.1f}s  {}", t,
                                 !active.empty()          ? fmt::format("fault:{}", fmt::join(active, ","))
                                 : faults_->any_reverted() ? std::string("recovery")
                                                           : std::string("baseline"));
  std::optional<double> eta;
  const auto step = store_.max_step();
  if (const auto steps = workload_->planned_steps(); steps > 0) {
    if (step > 0) {
      text += fmt::format("  step {}/{}", step, steps);
      eta = static_cast<double>(steps - step) * (t - recovery_->attempt_started_s()) / static_cast<double>(step);
    }
  } else if (step > 0) {
    text += fmt::format("  step {}", step);
  }
  if (const auto seconds = workload_->planned_seconds()) eta = std::max(0.0, *seconds - t);
  if (recovery_->restarting()) text += "  restarting";
  if (eta) text += fmt::format("  ETA {:.0f}s", *eta);
  return text;
}

// The harness's own view goes into the record store as events of rank -1
// (failure_detected, restart), where the resilience metrics are derived from.
void Run::harness_event(const std::string& name, bench::Labels fields) {
  bench::Event e;
  e.rank = -1;
  e.time = bench::wall_time_now();
  e.name = name;
  e.fields = std::move(fields);
  store_.add(e, e.time);
  std::vector<TimelineField> timeline;
  for (const auto& [k, v] : e.fields) timeline.emplace_back(k, TL::value(v));
  env_->timeline().write(now_s(), "harness_" + name, timeline);
}

// Runs on the metrics server's thread, or the agent hub's for records from other hosts:
// the store and the timeline are thread-safe.
void Run::take_record(const bench::Record& r, double received) {
  store_.add(r, received);
  const auto* e = std::get_if<bench::Event>(&r);
  if (e && e->name != "step") {
    double t = (e->time > 0 ? e->time : received) - t0_wall_;
    std::vector<TimelineField> fields{{"rank", TL::num(e->rank)}, {"name", TL::str(e->name)}};
    for (const auto& [k, v] : e->fields)
      if (k != "rank" && k != "name") fields.emplace_back(k, TL::value(v));
    env_->timeline().write(t, "workload_event", fields);
  }
}

void Run::start_metrics_server() {
  server_ = std::make_unique<MetricsServer>(env_->runtime() + "/metrics.sock",
                                            [this](const bench::Record& r, double received) { take_record(r, received); });
}

void Run::start_workload() {
  LaunchContext& ctx = launch_ctx_;
  NodeSite& site = env_->site();
  ctx.self_exe = common::self_exe();
  ctx.run_dir = env_->out();
  ctx.runtime_dir = env_->runtime();
  ctx.metrics_address = server_->address();
  ctx.scenario_dir = fs::absolute(scenario_.source_path).parent_path().lexically_normal().string();
  ctx.run_id = run_id_;
  for (int n = 0; n < scenario_.cluster.nodes; ++n) ctx.node_addrs.push_back(site.address(n));
  for (int n = 0; n < scenario_.cluster.nodes; ++n) ctx.node_stores.push_back(site.store_spec(n));
  if (!site.store_token().empty()) ctx.env[common::store_wire::kTokenEnv] = site.store_token();
  if (env_->namespaced()) ctx.node_interface = NetnsCluster::kNodeInterface;
  if (const auto port = workload_->master_port()) ctx.master_port = *port;
  else ctx.master_port = site.free_port(workload_->master_port_node());
  ctx.seed = scenario_.seed;
  blas_ = choose_workload_blas(scenario_, ctx.self_exe, ctx.env);
  ranks_->plan(plan_workload(scenario_, ctx), 0);
  t0_ = std::chrono::steady_clock::now();
  t0_wall_ = bench::wall_time_now();
  TimelineLog& timeline = env_->timeline();
  if (blas_)
    timeline.write(0, "blas_chosen", {{"detected", TL::str(blas_->detected)}, {"chosen", TL::str(blas_->chosen)},
                                      {"source", TL::str(blas_->source)}, {"reason", TL::str(blas_->reason)}});
  timeline.write(0, "workload_started", {{"kind", TL::str(workload_kind(scenario_.workload))},
                                         {"ranks", TL::num(static_cast<double>(ranks_->launches().size()))},
                                         {"wall", TL::num(t0_wall_)}});
  if (!site.store_token().empty())  // agent modes: where the ranks meet, as their argv says
    timeline.write(0, "rendezvous_store",
                   {{"stores", TL::str(fmt::format("{}", fmt::join(store_arguments(ranks_->launches()), " ")))}});
  // Every rank's GPU fault control block exists before any rank starts.
  for (const auto& l : ranks_->launches()) site.control_block(l.rank);
  interposer_ = gpu_interposer_for(scenario_, ctx.self_exe);
  collectors_at(RunCollector::Stage::kWorkload);
  for (std::size_t i = 0; i < ranks_->launches().size(); ++i) start_rank(i);
  collectors_at(RunCollector::Stage::kRanksStarted);
}

void Run::start_rank(std::size_t idx) {
  const auto& l = ranks_->launches()[idx];
  ProcessSpec spec = l.spec;
  const int restart = ranks_->restarts(idx);
  // A restarted rank knows it: the trainer's elastic mode joins the running job then.
  spec.env["CHAOSBENCH_RESTART"] = std::to_string(restart);
  spec.env["CHAOSBENCH_ATTEMPT"] = std::to_string(recovery_->attempt());
  spec.env[CB_CONTROL_ENV] = env_->site().control_block(l.rank);
  if (!interposer_.empty()) {  // a command workload under GPU faults: the CUDA interposer
    auto& preload = spec.env["LD_PRELOAD"];
    const char* inherited = std::getenv("LD_PRELOAD");
    if (preload.empty() && inherited) preload = inherited;
    preload = preload.empty() ? interposer_ : interposer_ + ":" + preload;
  }
  const std::string argv0 = spec.argv.front();
  const auto& p = ranks_->start(idx, std::move(spec), [this] { return now_s(); });
  std::vector<TimelineField> fields{{"rank", TL::num(l.rank)}, {"node", TL::str(p.node)}, {"pid", TL::num(p.pid)},
                                    {"restart", TL::num(restart)}, {"argv0", TL::str(argv0)}};
  if (!p.host.empty()) fields.emplace_back("host", TL::str(p.host));
  env_->timeline().write(p.started_at_s, restart > 0 ? "process_restarted" : "process_started", fields);
}

// Applies and reverts what is due; processes a fault ends on purpose are expected to
// exit, and recovery learns what to bring back.
void Run::apply_due(double t) {
  auto step_time = [this](std::int64_t step) -> std::optional<double> {
    auto reached = store_.step_reached_at(step);
    if (!reached) return std::nullopt;
    return *reached - t0_wall_;
  };
  auto ranks = [this] { return ranks_->processes(); };
  if (!steady_before_first_fault(t)) return;
  for (const auto& effect : faults_->run_due(t, store_.max_step(), ranks, step_time)) {
    for (pid_t pid : effect.ended) ranks_->expect_exit(pid);
    recovery_->on_fault(effect);
  }
}

bool Run::only_services_left() const {
  bool any_service = false;
  const auto& launches = ranks_->launches();
  for (std::size_t i = 0; i < launches.size(); ++i) {
    if (launches[i].service) {
      any_service = true;
      continue;
    }
    if (ranks_->running(i)) return false;
  }
  if (!any_service || recovery_->restarting()) return false;
  return !recovery_->pending_any([&](std::size_t idx) { return !launches[idx].service; });
}

// Whether the memory cgroup of `rank`'s node has OOM-killed something, while a fault
// that makes OOM kills its effect (node.memory_limit) is active.
bool Run::oom_killed(int rank) const {
  const int node = ranks_->node_of_rank(rank);
  if (node < 0 || !faults_->any_active(faults::kOomKills)) return false;
  return env_->site().oom_killed(node);
}

void Run::on_exit(pid_t pid) {
  auto* rec = ranks_->record_exit(pid, now_s());
  if (!rec) return;
  auto& p = *rec;
  TimelineLog& timeline = env_->timeline();
  if (!p.ended_by_fault && p.signal == SIGKILL && oom_killed(p.rank)) {
    // The kernel's OOM killer under node.memory_limit: the fault's effect, and an event.
    p.ended_by_fault = true;
    timeline.write(*p.ended_at_s, "oom_kill", {{"rank", TL::num(p.rank)}, {"node", TL::str(p.node)},
                                               {"pid", TL::num(static_cast<double>(pid))}});
    spdlog::warn("rank {} on {} was OOM-killed under its memory limit", p.rank, p.node);
  }
  timeline.write(*p.ended_at_s, "process_exited",
                 {{"rank", TL::num(p.rank)}, {"pid", TL::num(static_cast<double>(pid))},
                  {"exit_code", p.exit_code ? TL::num(*p.exit_code) : nullptr},
                  {"signal", p.signal ? TL::num(*p.signal) : nullptr},
                  {"ended_by_fault", p.ended_by_fault}});
  const bool ok = p.exit_code && *p.exit_code == 0;
  if (!ok && recovery_->spec().mode == RecoveryMode::kRestart && !SignalGuard::received() && !unwinding_) {
    // A rank that dies (or is killed) takes the job down, as under torchrun: recovery
    // restarts every rank. Exits while a restart is pending are part of the same failure.
    if (!recovery_->restarting())
      recovery_->on_rank_failed(p.ended_by_fault ? fmt::format("rank {} was ended by a fault", p.rank)
                                : p.exit_code   ? fmt::format("rank {} exited with code {}", p.rank, *p.exit_code)
                                                : fmt::format("rank {} was killed by signal {}", p.rank, p.signal.value_or(0)));
    return;
  }
  if (!ok && !p.ended_by_fault && !SignalGuard::received()) {
    verdict_.fail(p.exit_code ? fmt::format("rank {} exited with code {} (see {})", p.rank, *p.exit_code, p.stderr_log)
                              : fmt::format("rank {} was killed by signal {} (see {})", p.rank, p.signal.value_or(0),
                                            p.stderr_log),
                  now_s());
  }
}

Recovery::Hooks Run::recovery_hooks() {
  Recovery::Hooks hooks;
  hooks.now = [this] { return now_s(); };
  hooks.start_rank = [this](std::size_t idx) { start_rank(idx); };
  hooks.replan = [this](const std::vector<int>& nodes) {
    launch_ctx_.only_nodes = nodes;
    ranks_->plan(plan_workload(scenario_, launch_ctx_), recovery_->attempt());
  };
  hooks.event = [this](const std::string& name, bench::Labels fields) { harness_event(name, std::move(fields)); };
  hooks.fail = [this](const std::string& reason) { verdict_.fail(reason, now_s()); };
  return hooks;
}

// Before anything is made: a fault no backend of this host can do, or GPU faults on a
// command workload without the CUDA interposer, end the run here (exit 3).
void Run::check_host_can_run() const {
  for (const auto& f : scenario_.faults) {
    const auto* info = faults::find_fault_type(f.type);
    std::string why;
    if (info->host_backend && info->host_backend(f.params, &why).empty())
      throw HostError(fmt::format("fault {} ({}) cannot run on this host: {}", f.name, f.type, why));
  }
  if (auto lib = gpu_interposer_for(scenario_, common::self_exe()); !lib.empty() && !fs::exists(lib))
    throw HostError(fmt::format("this command workload has GPU faults, which need the CUDA interposer {}; this "
                                "chaosbench was built without it (no CUDA toolkit, or CHAOSBENCH_CUDA=OFF)", lib));
}

RunOutcome run_scenario(const Scenario& scenario, const RunOptions& options) {
  Run run(scenario, options);
  return run.execute();
}

}  // namespace chaosbench::harness
