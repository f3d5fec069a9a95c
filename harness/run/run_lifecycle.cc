// The run's story (Run::execute) and its phases: bring-up, the main loop, unwinding and
// the outcome. See run.h; runner.cc holds the steps these phases take.
#include <algorithm>
#include <chrono>
#include <fmt/format.h>
#include <spdlog/spdlog.h>
#include <thread>

#include "harness/core/host_error.h"
#include "harness/process/priority_boost.h"
#include "harness/derive/result_builder.h"
#include "harness/run/run.h"
#include "harness/process/signal_guard.h"

namespace chaosbench::harness {
namespace {

using TL = TimelineLog;

// When one rank fails, the others get this long to finish (or fail) on their own before
// they are stopped: a collective's peers notice a dead rank in well under a second.
constexpr double kPeerGraceS = 3.0;

}  // namespace

Run::~Run() {
  // After an unwind that threw, the collectors' threads still write the store, the
  // timeline and live_ and read t0_wall_; the mesh's sockets hold the nodes' namespaces.
  collectors_.clear();
  if (!env_) return;
  try {
    env_->site().stop_all();  // idempotent: nothing happens after a normal unwind
  } catch (const std::exception& e) {
    spdlog::error("stopping the nodes: {}", e.what());
  }
}

RunOutcome Run::execute() {
  // From the first step: a SIGINT during set-up is seen by the loop, which then unwinds
  // whatever set-up made (the journal holds it either way).
  SignalGuard signals;
  check_host_can_run();
  bring_up();
  PriorityBoost boost;
  progress_ = std::make_unique<ProgressLine>(!options_.quiet);
  live_.set_stage(RunStage::kRunning);
  const bool timed_out = main_loop();
  const double end_s = now_s();
  if (int sig = SignalGuard::received()) verdict_.interrupt(sig);
  progress_.reset();
  live_.set_stage(RunStage::kUnwinding);
  unwind(timed_out);
  live_.set_stage(RunStage::kFinished);  // the listener serves it until the run's object goes
  return outcome(end_s);
}

// The run environment (journal, directories, timeline, node cgroups, cluster network,
// node site: exit 3 when the host cannot give a fault what it needs), then the metrics
// intake, the fault driver, the rank table and recovery.
void Run::bring_up() {
  make_collectors();
  collectors_at(RunCollector::Stage::kFirst);  // a port in use ends the run before anything is made (exit 3)
  env_ = std::make_unique<RunEnvironment>(scenario_, options_, run_id_, [this] { return now_s(); },
                                          [this](const bench::Record& r, double received) { take_record(r, received); });
  try {
    start_metrics_server();
  } catch (const std::runtime_error& e) {
    throw HostError(fmt::format("cannot listen for metrics: {}", e.what()));
  }
  NodeSite& site = env_->site();
  plan_ = plan_schedule(scenario_.faults, scenario_.cluster.nodes, scenario_.seed, scenario_.timeout.seconds());
  faults_ = std::make_unique<FaultDriver>(
      scenario_.faults, site, env_->timeline(), [this] { return now_s(); },
      [this](const std::string& reason) {
        live_.fault_error();
        verdict_.fail(reason, now_s(), reports::Verdict::kError);
      },
      FaultSchedule(scenario_.faults, plan_));
  faults_->set_observer([this](const FaultTransition& t) { on_fault_transition(t); });
  for (const auto& o : faults_->schedule().occurrences())
    if (o.due_step) store_.watch_step(*o.due_step);
  ranks_ = std::make_unique<RankTable>(site, env_->out());
  recovery_ = std::make_unique<Recovery>(workload_recovery(scenario_.workload), scenario_.cluster.nodes, *ranks_, site,
                                         *faults_, recovery_hooks());
  collectors_at(RunCollector::Stage::kBringUp);
}

// Starts the workload, then applies and reverts faults on time, restarts what recovery
// restarts and judges every exit, until the workload ends, fails, is interrupted or runs
// out of time. Returns whether it ran out of time.
bool Run::main_loop() {
  const double timeout_s = scenario_.timeout.seconds();
  try {
    if (!SignalGuard::received()) start_workload();
    while (!SignalGuard::received()) {
      double t = now_s();
      if (t > timeout_s) {
        verdict_.fail(fmt::format("the run passed its timeout of {}", common::to_string(scenario_.timeout)), t);
        return true;
      }
      if (abort_requested(t)) break;
      if (progress_->enabled()) progress_->show(progress_text(t));
      const double last = store_.last_event_received();  // Unix seconds, 0 before any
      recovery_->tick(t, last > 0 ? std::optional<double>(last - t0_wall_) : std::nullopt);
      apply_due(t);
      tell_faults_finished();
      if (verdict_.errored()) break;  // a fault could not be applied: stop, do not half-run
      if (verdict_.first_failure_s() && t - *verdict_.first_failure_s() > kPeerGraceS) break;
      if (!wait_for_events()) continue;
      if (!env_->site().any_running() && !recovery_->restart_pending()) break;
      if (only_services_left()) {  // the load is done: the replicas stop, on purpose
        for (std::size_t i = 0; i < ranks_->launches().size(); ++i)
          if (ranks_->launches()[i].service && ranks_->pid(i) > 0) ranks_->expect_exit(ranks_->pid(i));
        break;
      }
    }
  } catch (const HostError& e) {
    verdict_.fail(e.what(), now_s(), reports::Verdict::kError, VerdictSource::kHostLimit);
  } catch (const std::exception& e) {
    verdict_.fail(e.what(), now_s(), reports::Verdict::kError);  // unexpected: exit 1 (exit_code.h)
  }
  return false;
}

// Sleeps until the next deadline; polls steps every 20 ms while a step trigger is
// pending; otherwise wakes only every 100 ms (signals, timeout) so the harness stays off
// the CPU the workload measures on. Process exits wake it at once and are judged.
// Returns false when it only slept precisely up to a fault's time (nothing exited).
bool Run::wait_for_events() {
  const auto& schedule = faults_->schedule();
  // A stop condition is noticed within 20 ms of being decided (fault/abort_latency).
  const bool quick = schedule.waiting_for_step() || recovery_->restart_pending() ||
                     std::any_of(collectors_.begin(), collectors_.end(), [](const auto& c) { return c->wants_quick_ticks(); });
  auto wait = std::chrono::milliseconds(quick ? 20 : 100);
  if (auto next = schedule.next_deadline()) {
    auto until = std::chrono::duration<double>(std::max(0.0, *next - now_s()));
    // poll(2) counts whole milliseconds: sleep the last stretch precisely instead, so
    // faults apply within ~0.1 ms of their time (fault/apply_latency).
    if (until < std::chrono::milliseconds(2)) {
      std::this_thread::sleep_for(until);
      return false;
    }
    wait = std::min(wait, std::chrono::floor<std::chrono::milliseconds>(until) - std::chrono::milliseconds(1));
  }
  for (pid_t pid : env_->site().wait_any(wait)) on_exit(pid);
  return true;
}

// Faults first (the workload may still be reporting), then processes, then what set-up
// made, newest first; the journal confirms each step and is removed last.
void Run::unwind(bool timed_out) {
  unwinding_ = true;
  faults_->revert_all();  // first: nothing (a scrape or probe in flight) may delay it
  note_abort_reverted();
  // Before the workload stops: its end is no probe failure, the scrape targets' going away
  // no outage; and before the nodes go: the mesh's sockets hold the namespaces.
  stop_collectors(/*last=*/false);
  std::vector<std::string> errors = env_->site().stop_all();
  for (pid_t pid : ranks_->unended()) on_exit(pid);
  server_->stop();
  for (const auto& e : errors) verdict_.fail(fmt::format("cleanup: {}", e), now_s(), reports::Verdict::kError);
  for (const auto& e : env_->tear_down()) verdict_.fail(e, now_s(), reports::Verdict::kError);
  stop_collectors(/*last=*/true);  // Grafana: the reverts' ends were queued above and posted meanwhile
  env_->timeline().write(now_s(), "run_finished",
                         {{"verdict", TL::str(reports::to_string(verdict_.judgement().verdict))}, {"timed_out", timed_out}});
}

// What results.json is to hold, and what its exit code needs besides the verdict.
RunOutcome Run::outcome(double end_s) {
  ResultInputs in{scenario_, env_->started_at(), t0_wall_, end_s, faults_->schedule(), faults_->records(),
                  ranks_->records(), store_, server_->malformed(), server_->malformed_examples(), {}, abort_, false};
  for (const auto& c : collectors_) c->add_to(in);
  RunOutcome out;
  out.run_dir = env_->out();
  out.result = build_result(in, verdict_.judgement());
  out.result.run_id = run_id_;
  out.result.schedule = schedule_entries(scenario_.faults, plan_);
  out.result.environment.blas = blas_;
  out.result.environment.cluster = env_->description();
  if (const RemoteSite* remote = env_->remote()) out.result.environment.hosts = remote->hosts();
  out.source = verdict_.source();
  return out;
}

}  // namespace chaosbench::harness
