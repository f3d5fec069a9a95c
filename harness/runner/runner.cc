#include "harness/runner/runner.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <csignal>
#include <cstring>
#include <filesystem>
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <fstream>
#include <map>
#include <memory>
#include <set>
#include <sstream>
#include <netinet/in.h>
#include <spdlog/spdlog.h>
#include <sched.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <thread>
#include <unistd.h>

#include "faults/network/network_plane.h"
#include "faults/node/cgroup_files.h"
#include "common/fault_control.h"
#include "faults/gpu/gpu_fault.h"
#include "faults/registry.h"
#include "harness/cli/exit_code.h"
#include "harness/host_error.h"
#include "harness/cluster/netns_cluster.h"
#include "harness/cluster/node_cgroups.h"
#include "harness/journal/journal.h"
#include "harness/journal/process_group_undo.h"
#include "harness/runner/cluster_network.h"
#include "harness/runner/fault_schedule.h"
#include "harness/runner/metrics_server.h"
#include "harness/runner/process_supervisor.h"
#include "harness/runner/result_builder.h"
#include "harness/runner/run_directory.h"
#include "harness/runner/sample_store.h"
#include "harness/runner/signal_guard.h"
#include "harness/runner/target_resolver.h"
#include "harness/runner/timeline_log.h"
#include "harness/runner/workload_launcher.h"
#include "harness/runner/priority_boost.h"
#include "harness/runner/run.h"
#include "harness/runner/workload_blas.h"

namespace chaosbench::harness {
namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;
using TL = TimelineLog;

std::string self_exe() {
  std::error_code ec;
  auto p = fs::read_symlink("/proc/self/exe", ec);
  return ec ? std::string("chaosbench") : p.string();
}

// A free TCP port on loopback for MASTER_PORT (bound then released; the workload binds it).
int free_port() {
  int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return 29500;
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof(addr);
  int port = 29500;
  if (::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) == 0 &&
      ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) == 0)
    port = ntohs(addr.sin_port);
  ::close(fd);
  return port;
}



}  // namespace

// "  12.3s  fault:slow-link  step 152/400  ETA 25s" for the status line.
std::string Run::progress_text(double t) const {
  std::vector<std::string> active;
  bool reverted = false;
  for (const auto& o : schedule_.occurrences()) {
    if (o.state == OccurrenceState::kActive) active.push_back(scenario_.faults[o.fault].name);
    reverted = reverted || o.state == OccurrenceState::kDone;
  }
  std::string text = fmt::format("{:7.1f}s  {}", t,
                                 !active.empty() ? fmt::format("fault:{}", fmt::join(active, ","))
                                 : reverted      ? std::string("recovery")
                                                 : std::string("baseline"));
  std::optional<double> eta;
  const auto step = store_.max_step();
  if (const auto* train = std::get_if<TrainWorkload>(&scenario_.workload)) {
    if (step > 0) {
      text += fmt::format("  step {}/{}", step, train->steps);
      eta = static_cast<double>(train->steps - step) * (t - attempt_started_s_) / static_cast<double>(step);
    }
  } else if (step > 0) {
    text += fmt::format("  step {}", step);
  }
  if (const auto* coll = std::get_if<CollectiveWorkload>(&scenario_.workload); coll && coll->duration.value.count() > 0)
    eta = std::max(0.0, coll->duration.seconds() - t);
  if (const auto* serve = std::get_if<ServeWorkload>(&scenario_.workload))
    eta = std::max(0.0, serve->load.duration.seconds() - t);
  if (group_restart_at_) text += "  restarting";
  if (eta) text += fmt::format("  ETA {:.0f}s", *eta);
  return text;
}

void Run::fail(std::string reason, reports::Verdict verdict) {
  if (verdict_.verdict == reports::Verdict::kPass) spdlog::error("{}", reason);
  verdict_ = reports::fold(std::move(verdict_), {verdict, std::move(reason)});
  if (!first_failure_s_) first_failure_s_ = now_s();
}

std::vector<RankProcess> Run::rank_processes() const {
  std::vector<RankProcess> out;
  for (std::size_t i = 0; i < launches_.size(); ++i) {
    pid_t pid = i < pids_.size() ? pids_[i] : -1;
    if (pid > 0 && !supervisor_.status(pid).running) pid = -1;
    out.push_back({launches_[i].rank, launches_[i].node, pid});
  }
  return out;
}

void Run::start_metrics_server() {
  // Runs on the server's thread: the store and the timeline are thread-safe.
  auto on_record = [this](const bench::Record& r, double received) {
    store_.add(r, received);
    const auto* e = std::get_if<bench::Event>(&r);
    if (e && e->name != "step") {
      double t = (e->time > 0 ? e->time : received) - t0_wall_;
      std::vector<TimelineField> fields{{"rank", TL::num(e->rank)}, {"name", TL::str(e->name)}};
      for (const auto& [k, v] : e->fields)
        if (k != "rank" && k != "name") fields.emplace_back(k, TL::value(v));
      timeline_->write(t, "workload_event", fields);
    }
  };
  server_ = std::make_unique<MetricsServer>(dir_->runtime() + "/metrics.sock", on_record);
}

void Run::start_workload() {
  LaunchContext& ctx = launch_ctx_;
  ctx.self_exe = self_exe();
  ctx.run_dir = dir_->out();
  ctx.runtime_dir = dir_->runtime();
  ctx.metrics_address = server_->address();
  ctx.scenario_dir = fs::absolute(scenario_.source_path).parent_path().lexically_normal().string();
  ctx.run_id = run_id_;
  ctx.node_addrs.assign(static_cast<std::size_t>(scenario_.cluster.nodes), "127.0.0.1");
  if (cluster_->namespaced()) {
    for (int n = 0; n < scenario_.cluster.nodes; ++n) ctx.node_addrs[static_cast<std::size_t>(n)] = cluster_->address(n);
    ctx.node_interface = NetnsCluster::kNodeInterface;
  }
  const auto* command = std::get_if<CommandWorkload>(&scenario_.workload);
  if (command && command->master_port) {
    ctx.master_port = *command->master_port;
  } else if (cluster_->namespaced()) {
    // Probed where the master listens: in its node's namespace nobody but the run can
    // take the port between this probe and the workload's bind.
    const int master = command && !command->nodes.empty() ? command->nodes.front() : 0;
    NetnsCluster::in_netns(cluster_->netns_fd(master), [&] { ctx.master_port = free_port(); });
  } else {
    ctx.master_port = free_port();  // on a shared host any user can bind it first: see docs
  }
  ctx.seed = scenario_.seed;
  recovery_ = workload_recovery(scenario_.workload);
  blas_ = choose_workload_blas(scenario_, ctx.self_exe, ctx.env);
  launches_ = plan_workload(scenario_, ctx);
  t0_ = Clock::now();
  t0_wall_ = bench::wall_time_now();
  if (blas_)
    timeline_->write(0, "blas_chosen", {{"detected", TL::str(blas_->detected)}, {"chosen", TL::str(blas_->chosen)},
                                        {"source", TL::str(blas_->source)}, {"reason", TL::str(blas_->reason)}});
  timeline_->write(0, "workload_started", {{"kind", TL::str(workload_kind(scenario_.workload))},
                                           {"ranks", TL::num(static_cast<double>(launches_.size()))},
                                           {"wall", TL::num(t0_wall_)}});
  pids_.assign(launches_.size(), -1);
  restarts_.assign(launches_.size(), 0);
  create_control_blocks();
  for (std::size_t i = 0; i < launches_.size(); ++i) start_rank(i);
}

// One GPU fault control block per rank (common/control_block.h), made before any
// rank starts and kept across restarts: a fault armed on a rank stays armed for the
// process that replaces it, as a broken GPU stays broken.
void Run::create_control_blocks() {
  control_dir_ = dir_->runtime() + "/control";
  fs::create_directories(control_dir_);
  for (const auto& l : launches_) {
    const std::string path = faults::control_path(control_dir_, l.rank);
    const int fd = common::FaultControl::create(path, static_cast<std::uint64_t>(l.rank));
    if (fd < 0)
      throw HostError(fmt::format("cannot create the fault control block {}: {}", path, std::strerror(errno)));
    control_fds_.emplace_back(fd);
  }
  interposer_ = gpu_interposer_for(scenario_, self_exe());
}

void Run::start_rank(std::size_t idx) {
  const auto& l = launches_[idx];
  ProcessSpec spec = l.spec;
  const int restart = restarts_[idx];
  if (restart > 0) {  // keep the first life's logs
    spec.stdout_path = fmt::format("{}/logs/rank{}.restart{}.out", dir_->out(), l.rank, restart);
    spec.stderr_path = fmt::format("{}/logs/rank{}.restart{}.err", dir_->out(), l.rank, restart);
  }
  starting_node_ = l.node;
  spec.netns_fd = cluster_->netns_fd(l.node);
  spec.uts_fd = cluster_->uts_fd(l.node);
  spec.mnt_fd = cluster_->mnt_fd(l.node);
  // A restarted rank knows it: the trainer's elastic mode joins the running job then.
  spec.env["CHAOSBENCH_RESTART"] = std::to_string(restart);
  spec.env["CHAOSBENCH_ATTEMPT"] = std::to_string(attempt_);
  spec.env[CB_CONTROL_ENV] = faults::control_path(control_dir_, l.rank);
  spec.env[kProcessMarkerEnv] = journal_->process_marker();  // see process_group_undo.h
  if (!interposer_.empty()) {  // a command workload under GPU faults: the CUDA interposer
    auto& preload = spec.env["LD_PRELOAD"];
    const char* inherited = std::getenv("LD_PRELOAD");
    if (preload.empty() && inherited) preload = inherited;
    preload = preload.empty() ? interposer_ : interposer_ + ":" + preload;
  }
  pid_t pid = supervisor_.start(spec);  // throws when the program cannot start
  pids_[idx] = pid;
  reports::ProcessRecord p;
  p.role = "rank";
  p.rank = l.rank;
  p.node = fmt::format("node{}", l.node);
  p.pid = pid;
  p.restart = restart;
  p.started_at_s = now_s();
  p.stdout_log = fs::relative(spec.stdout_path, dir_->out()).string();
  p.stderr_log = fs::relative(spec.stderr_path, dir_->out()).string();
  record_of_pid_[pid] = processes_.size();
  processes_.push_back(p);
  timeline_->write(p.started_at_s, restart > 0 ? "process_restarted" : "process_started",
                   {{"rank", TL::num(l.rank)}, {"node", TL::str(p.node)}, {"pid", TL::num(pid)},
                    {"restart", TL::num(restart)}, {"argv0", TL::str(spec.argv.front())}});
}

void Run::restart_due(double t) {
  for (auto it = pending_restarts_.begin(); it != pending_restarts_.end();) {
    if (it->at_s > t) {
      ++it;
      continue;
    }
    // A process started into a frozen node would freeze before exec, with the harness
    // waiting on it: a replacement comes up once its node is thawed.
    bool frozen = false;
    for (auto idx : it->launches) frozen = frozen || node_frozen(launches_[idx].node);
    // A rank a GPU fault ends ends itself, when it next touches the device (or its
    // watchdog fires): its replacement waits for that.
    bool still_running = false;
    for (auto idx : it->launches) still_running = still_running || (pids_[idx] > 0 && supervisor_.status(pids_[idx]).running);
    if (frozen || still_running) {
      ++it;
      continue;
    }
    if (it->revert_occurrence && faults_[*it->revert_occurrence] && faults_[*it->revert_occurrence]->applied())
      revert(*it->revert_occurrence);
    harness_event("restart", {{"attempt", static_cast<std::int64_t>(attempt_)},
                              {"ranks", static_cast<std::int64_t>(it->launches.size())},
                              {"fault", it->fault}});
    for (auto idx : it->launches) {
      ++restarts_[idx];
      start_rank(idx);
      spdlog::info("rank {} restarted at {:.3f}s after {}", launches_[idx].rank, now_s(), it->fault);
    }
    it = pending_restarts_.erase(it);
  }
}

void Run::apply(std::size_t i) {
  const auto& o = schedule_.occurrences()[i];
  const auto& spec = scenario_.faults[o.fault];
  const auto* info = faults::find_fault_type(spec.type);
  auto& rec = fault_records_[i];
  double scheduled = o.due_s.value_or(now_s());
  try {
    auto target = resolve_target(spec.target, scenario_.cluster, rank_processes(), scenario_.seed, o.fault, cgroups_.get());
    target.network = cluster_->plane();
    target.control_dir = control_dir_;
    rec.targets = target.names();
    faults_[i] = info->make(spec.params);
    faults_[i]->apply(target, *journal_);
    double t = now_s();
    // Processes the fault ends on purpose: their exit is its effect, not a failure.
    std::vector<std::size_t> ended;
    for (pid_t pid : faults_[i]->ended_processes()) {
      expected_exits_.insert(pid);
      for (std::size_t k = 0; k < pids_.size(); ++k)
        if (pids_[k] == pid) ended.push_back(k);
    }
    if (spec.params.has("restart_after") && !ended.empty()) {
      std::optional<std::size_t> repair;
      if (faults_[i]->reversible()) repair = i;
      pending_restarts_.push_back(
          {t + spec.params.get<common::Duration>("restart_after").seconds(), ended, spec.name, repair});
    } else if (faults::fault_has_trait(spec.type, faults::kNodeGone)) {  // for good: recovery restarts without it
      for (auto k : ended) nodes_down_.insert(launches_[k].node);
    }
    schedule_.mark_applied(i, t);
    rec.applied_at_s = t;
    rec.backend = faults_[i]->backend();
    // Scheduled time to in effect: the harness's own timing precision. For a step
    // trigger the schedule is the arrival of the step event that reached it.
    if (o.due_step) {
      auto reached = store_.step_reached_at(*o.due_step);
      scheduled = reached ? *reached - t0_wall_ : t;
    }
    rec.apply_latency_us = std::max(0.0, (t - scheduled) * 1e6);
    timeline_->write(t, "fault_applied", {{"fault", TL::str(spec.name)}, {"type", TL::str(spec.type)},
                                          {"occurrence", TL::num(o.number)}, {"backend", TL::str(rec.backend)},
                                          {"apply_latency_us", TL::num(*rec.apply_latency_us)}});
    spdlog::info("fault {} ({}) applied at {:.3f}s on {}", spec.name, spec.type, t, fmt::join(rec.targets, ", "));
  } catch (const std::exception& e) {
    schedule_.mark_failed(i);
    rec.error = e.what();
    timeline_->write(now_s(), "fault_failed", {{"fault", TL::str(spec.name)}, {"error", TL::str(e.what())}});
    fail(fmt::format("fault {} ({}) could not be applied: {}", spec.name, spec.type, e.what()), reports::Verdict::kError);
  }
}

void Run::revert(std::size_t i) {
  const auto& o = schedule_.occurrences()[i];
  const auto& spec = scenario_.faults[o.fault];
  auto& rec = fault_records_[i];
  try {
    if (faults_[i] && faults_[i]->reversible()) faults_[i]->revert();
    double t = now_s();
    if (faults_[i]) rec.effect = faults_[i]->effect();
    schedule_.mark_reverted(i, t);
    rec.reverted_at_s = t;
    timeline_->write(t, "fault_reverted", {{"fault", TL::str(spec.name)}, {"occurrence", TL::num(o.number)}});
    spdlog::info("fault {} reverted at {:.3f}s", spec.name, t);
  } catch (const std::exception& e) {
    schedule_.mark_failed(i);
    rec.error = fmt::format("revert failed: {}", e.what());
    timeline_->write(now_s(), "fault_revert_failed", {{"fault", TL::str(spec.name)}, {"error", TL::str(e.what())}});
    fail(fmt::format("fault {} could not be reverted: {}", spec.name, e.what()), reports::Verdict::kError);
  }
}

void Run::revert_all() {
  // Reverse order of application, so layered faults unwind as they were built.
  std::vector<std::size_t> active;
  for (std::size_t i = 0; i < schedule_.occurrences().size(); ++i)
    if (schedule_.occurrences()[i].state == OccurrenceState::kActive) active.push_back(i);
  std::sort(active.begin(), active.end(), [&](auto a, auto b) {
    return schedule_.occurrences()[a].applied_s > schedule_.occurrences()[b].applied_s;
  });
  for (auto i : active) revert(i);
}

bool Run::only_services_left() const {
  bool any_service = false;
  for (std::size_t i = 0; i < launches_.size(); ++i) {
    if (launches_[i].service) {
      any_service = true;
      continue;
    }
    if (pids_[i] > 0 && supervisor_.status(pids_[i]).running) return false;
  }
  if (!any_service || group_restart_at_) return false;
  for (const auto& p : pending_restarts_)
    for (auto idx : p.launches)
      if (!launches_[idx].service) return false;
  return true;
}

bool Run::node_frozen(int node) const {
  if (!cgroups_) return false;
  const std::string dir = cgroups_->dir(node, "freezer");
  if (dir.empty()) return false;
  const int version = cgroups_->version();  // v1 freezer.state not THAWED, v2 cgroup.freeze 1
  std::ifstream in(dir + "/" + std::string(faults::cgroup_file(version, faults::CgroupKnob::kFreeze)));
  std::string state;
  return in >> state && faults::freeze_requested(version, state);
}

// Whether the memory cgroup of `rank`'s node has OOM-killed something ("oom_kill N" in
// v1 memory.oom_control, v2 memory.events), only while a node.memory_limit fault is
// active there.
bool Run::oom_killed(int rank) const {
  int node = -1;
  for (const auto& l : launches_)
    if (l.rank == rank) node = l.node;
  if (node < 0 || !cgroups_) return false;
  bool limited = false;
  for (const auto& o : schedule_.occurrences())
    limited = limited ||
              (o.state == OccurrenceState::kActive && faults::fault_has_trait(scenario_.faults[o.fault].type, faults::kOomKills));
  const std::string dir = cgroups_->dir(node, "memory");
  if (!limited || dir.empty()) return false;
  std::ifstream in(dir + "/" + std::string(faults::cgroup_file(cgroups_->version(), faults::CgroupKnob::kOomEvents)));
  std::stringstream text;
  text << in.rdbuf();
  return faults::oom_kill_count(text.str()).value_or(0) > 0;
}

void Run::on_exit(pid_t pid) {
  auto rec = record_of_pid_.find(pid);
  if (rec == record_of_pid_.end()) return;
  auto& p = processes_[rec->second];
  if (p.ended_at_s) return;
  const auto& st = supervisor_.status(pid);
  p.exit_code = st.exit_code;
  p.signal = st.signal;
  p.ended_at_s = now_s();
  p.ended_by_fault = expected_exits_.count(pid) > 0;
  if (!p.ended_by_fault && st.signal == SIGKILL && oom_killed(p.rank)) {
    // The kernel's OOM killer under node.memory_limit: the fault's effect, and an event.
    p.ended_by_fault = true;
    timeline_->write(*p.ended_at_s, "oom_kill", {{"rank", TL::num(p.rank)}, {"node", TL::str(p.node)},
                                                 {"pid", TL::num(static_cast<double>(pid))}});
    spdlog::warn("rank {} on {} was OOM-killed under its memory limit", p.rank, p.node);
  }
  timeline_->write(*p.ended_at_s, "process_exited",
                   {{"rank", TL::num(p.rank)}, {"pid", TL::num(static_cast<double>(pid))},
                    {"exit_code", st.exit_code ? TL::num(*st.exit_code) : "null"},
                    {"signal", st.signal ? TL::num(*st.signal) : "null"},
                    {"ended_by_fault", p.ended_by_fault ? "true" : "false"}});
  bool ok = st.exit_code && *st.exit_code == 0;
  if (!ok && recovery_.mode == RecoveryMode::kRestart && !SignalGuard::received() && !unwinding_) {
    // A rank that dies (or is killed) takes the job down, as under torchrun: recovery
    // restarts every rank. Exits while a restart is pending are part of the same failure.
    if (!group_restart_at_)
      on_rank_failed(p.ended_by_fault ? fmt::format("rank {} was ended by a fault", p.rank)
                     : st.exit_code   ? fmt::format("rank {} exited with code {}", p.rank, *st.exit_code)
                                      : fmt::format("rank {} was killed by signal {}", p.rank, st.signal.value_or(0)));
    return;
  }
  if (!ok && !p.ended_by_fault && !SignalGuard::received()) {
    fail(st.exit_code ? fmt::format("rank {} exited with code {} (see {})", p.rank, *st.exit_code, p.stderr_log)
                      : fmt::format("rank {} was killed by signal {} (see {})", p.rank, st.signal.value_or(0), p.stderr_log));
  }
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
  if (auto lib = gpu_interposer_for(scenario_, self_exe()); !lib.empty() && !fs::exists(lib))
    throw HostError(fmt::format("this command workload has GPU faults, which need the CUDA interposer {}; this "
                                "chaosbench was built without it (no CUDA toolkit, or CHAOSBENCH_CUDA=OFF)", lib));
}

RunOutcome run_scenario(const Scenario& scenario, const RunOptions& options) {
  Run run(scenario, options);
  return run.execute();
}

}  // namespace chaosbench::harness
