// The run's story (Run::execute) and its phases: bring-up, the main loop, unwinding and
// the outcome. See run.h; runner.cc holds the steps these phases take.
#include <algorithm>
#include <chrono>
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <spdlog/spdlog.h>
#include <thread>

#include "faults/registry.h"
#include "harness/host_error.h"
#include "harness/runner/priority_boost.h"
#include "harness/runner/result_builder.h"
#include "harness/runner/run.h"
#include "harness/runner/signal_guard.h"

namespace chaosbench::harness {
namespace {

using TL = TimelineLog;

// When one rank fails, the others get this long to finish (or fail) on their own before
// they are stopped: a collective's peers notice a dead rank in well under a second.
constexpr double kPeerGraceS = 3.0;

}  // namespace

RunOutcome Run::execute() {
  // From the first step: a SIGINT during set-up is seen by the loop, which then unwinds
  // whatever set-up made (the journal holds it either way).
  SignalGuard signals;
  check_host_can_run();
  const std::string started_at = bring_up();
  PriorityBoost boost;
  progress_ = std::make_unique<ProgressLine>(!options_.quiet);
  const bool timed_out = main_loop();
  const double end_s = now_s();
  if (int sig = SignalGuard::received()) {
    verdict_ = reports::fold(std::move(verdict_),
                             {reports::Verdict::kInterrupted, fmt::format("interrupted by signal {}", sig)});
    spdlog::warn("{}: stopping every process and reverting every fault", verdict_.reason);
  }
  progress_.reset();
  unwind(timed_out);
  return outcome(started_at, end_s);
}

// The journal, the output directory and the timeline, the node cgroups, the cluster
// network and the metrics intake, checking on the way that the host can give every
// fault what it needs (exit 3 before any rank starts). Returns the start's timestamp.
std::string Run::bring_up() {
  out_dir_ = RunDirectory::resolve_out(options_.out_dir, scenario_.name);
  journal_ = std::make_unique<Journal>(Journal::default_directory(), run_id_, out_dir_);
  dir_ = std::make_unique<RunDirectory>(out_dir_, run_id_, *journal_);
  timeline_ = std::make_unique<TimelineLog>(dir_->out() + "/timeline.jsonl");
  std::string started_at = utc_timestamp_iso();
  timeline_->write(0, "run_started", {{"scenario", TL::str(scenario_.name)}, {"out", TL::str(dir_->out())},
                                      {"seed", TL::num(static_cast<double>(scenario_.seed))}});
  make_node_cgroups();
  cluster_ = std::make_unique<ClusterNetwork>(scenario_.cluster, scenario_.seed, run_id_, dir_->runtime(), *journal_,
                                              *timeline_, now_s());
  netns_used_ = cluster_->namespaced();
  // A fault this host cannot inject fails the run before anything starts (exit 3), never
  // halfway through it.
  for (const auto& f : scenario_.faults) {
    const auto* info = faults::find_fault_type(f.type);
    if (info->needs_namespaces && !cluster_->namespaced())
      throw HostError(fmt::format("fault {} ({}) needs the cluster in network namespaces, and this run has local "
                                  "processes: {}", f.name, f.type, cluster_->why_local()));
    if (info->needs_cgroup.empty()) continue;
    if (cgroups_->dir(0, std::string(info->needs_cgroup)).empty())
      throw HostError(fmt::format("fault {} ({}) needs the {} cgroup of each node, which this host cannot give: {}", f.name,
                                  f.type, info->needs_cgroup,
                                  cgroups_available_ ? cgroups_->why_missing(std::string(info->needs_cgroup))
                                                     : cgroups_why_not_));
  }
  try {
    start_metrics_server();
  } catch (const std::runtime_error& e) {
    throw HostError(fmt::format("cannot listen for metrics: {}", e.what()));
  }
  prepare_fault_records();
  return started_at;
}

// Each node's cgroups with the controllers the faults need beside freezer and pids.
void Run::make_node_cgroups() {
  std::vector<std::string> controllers{"freezer", "pids"};
  for (const auto& f : scenario_.faults) {
    const auto need = std::string(faults::find_fault_type(f.type)->needs_cgroup);
    if (!need.empty() && std::find(controllers.begin(), controllers.end(), need) == controllers.end())
      controllers.push_back(need);
  }
  cgroups_ = std::make_unique<NodeCgroups>(scenario_.cluster.nodes, run_id_, *journal_, controllers);
  cgroups_available_ = cgroups_->available();
  cgroup_version_ = cgroups_->version();
  std::vector<std::string> present;
  for (const auto& c : controllers)
    if (!cgroups_->dir(0, c).empty()) present.push_back(c);
  cgroup_list_ = fmt::format("{}", fmt::join(present, ", "));
  cgroups_why_not_ = cgroups_->why_not();
  if (!cgroups_available_) spdlog::info("node cgroups: {}", cgroups_why_not_);
}

// One record per scheduled occurrence, filled in as it is applied and reverted.
void Run::prepare_fault_records() {
  faults_.resize(schedule_.occurrences().size());
  for (const auto& o : schedule_.occurrences())
    if (o.due_step) store_.watch_step(*o.due_step);
  for (const auto& o : schedule_.occurrences()) {
    const auto& spec = scenario_.faults[o.fault];
    reports::FaultRecord rec;
    rec.name = spec.name;
    rec.type = spec.type;
    rec.occurrence = o.number;
    rec.reversible = faults::find_fault_type(spec.type)->reversible;
    fault_records_.push_back(rec);
  }
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
        fail(fmt::format("the run passed its timeout of {}", common::to_string(scenario_.timeout)));
        return true;
      }
      if (progress_->enabled()) progress_->show(progress_text(t));
      restart_due(t);
      group_restart_due(t);
      check_hang(t);
      for (const auto& action : schedule_.due(t, store_.max_step())) {
        if (action.kind == ScheduledAction::kApply) apply(action.occurrence);
        else revert(action.occurrence);
      }
      if (verdict_.verdict == reports::Verdict::kError) break;  // a fault could not be applied: stop, do not half-run
      if (first_failure_s_ && t - *first_failure_s_ > kPeerGraceS) break;
      if (!wait_for_events()) continue;
      if (!supervisor_.any_running() && pending_restarts_.empty() && !group_restart_at_) break;
      if (only_services_left()) {  // the load is done: the replicas stop, on purpose
        for (std::size_t i = 0; i < launches_.size(); ++i)
          if (launches_[i].service && pids_[i] > 0) expected_exits_.insert(pids_[i]);
        break;
      }
    }
  } catch (const HostError& e) {
    fail(e.what(), reports::Verdict::kError);
    verdict_source_ = VerdictSource::kHostLimit;
  } catch (const std::exception& e) {
    fail(e.what(), reports::Verdict::kError);  // unexpected: exit 1, as for any error (exit_code.h)
  }
  return false;
}

// Sleeps until the next deadline; polls steps every 20 ms while a step trigger is
// pending; otherwise wakes only every 100 ms (signals, timeout) so the harness stays off
// the CPU the workload measures on. Process exits wake it at once and are judged.
// Returns false when it only slept precisely up to a fault's time (nothing exited).
bool Run::wait_for_events() {
  auto wait = std::chrono::milliseconds(
      schedule_.waiting_for_step() || !pending_restarts_.empty() || group_restart_at_ ? 20 : 100);
  if (auto next = schedule_.next_deadline()) {
    auto until = std::chrono::duration<double>(std::max(0.0, *next - now_s()));
    // poll(2) counts whole milliseconds: sleep the last stretch precisely instead, so
    // faults apply within ~0.1 ms of their time (fault/apply_latency).
    if (until < std::chrono::milliseconds(2)) {
      std::this_thread::sleep_for(until);
      return false;
    }
    wait = std::min(wait, std::chrono::floor<std::chrono::milliseconds>(until) - std::chrono::milliseconds(1));
  }
  for (pid_t pid : supervisor_.wait_any(wait)) on_exit(pid);
  return true;
}

// Faults first (the workload may still be reporting), then processes, then what set-up
// made, newest first; the journal confirms each step and is removed last.
void Run::unwind(bool timed_out) {
  unwinding_ = true;
  revert_all();
  supervisor_.stop_all();
  for (const auto& [pid, idx] : record_of_pid_)
    if (!processes_[idx].ended_at_s) on_exit(pid);
  server_->stop();
  // Every process group is gone (stop_all); the journal confirms it, then the runtime
  // directory goes, then the journal itself.
  for (auto id : process_entries_) {
    try {
      journal_->undo(id);
    } catch (const std::exception& e) {
      fail(fmt::format("cleanup: {}", e.what()), reports::Verdict::kError);
    }
  }
  cgroups_.reset();
  for (const auto& e : cluster_->shut_down()) fail(fmt::format("cleanup: cluster.link: {}", e), reports::Verdict::kError);
  dir_.reset();
  for (const auto& e : journal_->finish()) fail(fmt::format("cleanup: {}", e), reports::Verdict::kError);
  timeline_->write(now_s(), "run_finished", {{"verdict", TL::str(std::string(reports::to_string(verdict_.verdict)))}, {"timed_out", timed_out ? "true" : "false"}});
}

// What results.json is to hold, and the exit code (exit_code.h).
RunOutcome Run::outcome(const std::string& started_at, double end_s) {
  ResultInputs in{scenario_, started_at, t0_wall_, end_s, schedule_, fault_records_, processes_, store_,
                  server_->malformed(), server_->malformed_examples()};
  RunOutcome out;
  out.run_dir = out_dir_;
  out.result = build_result(in, verdict_);
  out.result.run_id = run_id_;
  out.result.environment.blas = blas_;
  out.result.environment.cluster =
      fmt::format("{}, {}", netns_used_ ? "network namespaces (veth, bridge)" : "local processes on loopback",
                  cgroups_available_ ? fmt::format("node cgroups (v{}: {})", cgroup_version_, cgroup_list_)
                                     : fmt::format("no node cgroups ({})", cgroups_why_not_));
  out.exit_code = exit_code_for(out.result.verdict, verdict_source_);
  return out;
}

}  // namespace chaosbench::harness
