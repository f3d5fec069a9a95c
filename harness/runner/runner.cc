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

#include "faults/network/impairment_fault.h"
#include "faults/network/network_plane.h"
#include "faults/network/rate_fault.h"
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

// When one rank fails, the others get this long to finish (or fail) on their own before
// they are stopped: a collective's peers notice a dead rank in well under a second.
constexpr double kPeerGraceS = 3.0;

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

void Run::fail(std::string reason, std::string verdict) {
  if (verdict_ == "pass") {
    verdict_ = std::move(verdict);
    reason_ = std::move(reason);
    spdlog::error("{}", reason_);
  }
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

// Network namespaces per node where the scenario and the host allow; else local processes.
void Run::start_cluster_network() {
  const auto mode = scenario_.cluster.mode;
  if (mode == ClusterMode::kLocal) {
    cluster_why_local_ = "cluster.mode is local";
    if (link_asked()) throw HostError("cluster.link needs the cluster in network namespaces, and cluster.mode is local");
    return;
  }
  try {
    auto start = Clock::now();
    netns_ = std::make_unique<NetnsCluster>(scenario_.cluster.nodes, run_id_);
    const double ms = std::chrono::duration<double, std::milli>(Clock::now() - start).count();
    spdlog::info("cluster: {} network namespaces up in {:.1f} ms", scenario_.cluster.nodes, ms);
    std::vector<std::string> ids, addrs;
    for (const auto& id : netns_->namespace_ids()) ids.push_back(TL::str(id));
    for (int n = 0; n < scenario_.cluster.nodes; ++n) addrs.push_back(TL::str(netns_->address(n)));
    timeline_->write(0, "cluster_up", {{"mode", TL::str("network namespaces")}, {"bring_up_ms", TL::num(ms)},
                                       {"netns", fmt::format("[{}]", fmt::join(ids, ","))},
                                       {"addresses", fmt::format("[{}]", fmt::join(addrs, ","))}});
    name_nodes();
    std::vector<faults::NetworkNode> nodes;
    for (int n = 0; n < scenario_.cluster.nodes; ++n)
      nodes.push_back({netns_->node_netns_fd(n), netns_->address(n), NetnsCluster::bridge_port(n)});
    network_ = std::make_unique<faults::NetworkPlane>(netns_->bridge_netns_fd(), std::move(nodes),
                                                      NetnsCluster::kNodeInterface, scenario_.seed);
    shape_links();
  } catch (const HostError& e) {
    if (mode == ClusterMode::kNamespaces || link_asked()) throw;
    cluster_why_local_ = e.what();
    spdlog::info("cluster: local processes on loopback ({})", cluster_why_local_);
  }
}

// Hostnames that resolve to the nodes' addresses, for programs that find their peers by
// name (docs/scenario-format.md). Without them a run still works for everything that is
// told addresses (the built-in workloads, *_SOCKET_IFNAME), so a host that cannot make
// them gets a warning, not an error.
void Run::name_nodes() {
  std::vector<std::string> addrs;
  for (int n = 0; n < scenario_.cluster.nodes; ++n) addrs.push_back(netns_->address(n));
  try {
    names_ = std::make_unique<NodeIdentity>(addrs, dir_->runtime());
    timeline_->write(0, "nodes_named", {{"hostnames", TL::str(fmt::format("node0..node{}", addrs.size() - 1))}});
  } catch (const HostError& e) {
    spdlog::warn("cluster: the nodes keep the host's name ({}); programs that find peers by hostname may not", e.what());
    timeline_->write(0, "nodes_not_named", {{"error", TL::str(e.what())}});
  }
}

bool Run::link_asked() const { return scenario_.cluster.link.rate || scenario_.cluster.link.delay; }

// cluster.link: every node's link gets the rate (its egress, as a NIC) and the one-way
// delay (each packet once), for the whole run: the same fault classes, never reverted
// before the end.
void Run::shape_links() {
  const auto& link = scenario_.cluster.link;
  faults::ResolvedTarget all;
  for (int n = 0; n < scenario_.cluster.nodes; ++n) all.nodes.push_back(n);
  all.network = network_.get();
  try {
    if (link.rate) {
      link_shaping_.push_back(std::make_unique<faults::RateFault>(link.rate->bits_per_second, 0, faults::Direction::kEgress));
      link_shaping_.back()->apply(all, *journal_);
    }
    if (link.delay) {
      faults::Impairment imp;
      imp.delay = link.delay->value;
      link_shaping_.push_back(std::make_unique<faults::ImpairmentFault>(imp, faults::Direction::kEgress, "auto"));
      link_shaping_.back()->apply(all, *journal_);
    }
  } catch (const faults::FaultError& e) {
    for (auto it = link_shaping_.rbegin(); it != link_shaping_.rend(); ++it) {
      try {
        (*it)->revert();  // what did go in comes out: its journal entries close
      } catch (const std::exception&) {
      }
    }
    link_shaping_.clear();
    throw HostError(fmt::format("cluster.link cannot be set up on this host: {}", e.what()));
  }
  for (const auto& f : link_shaping_)
    timeline_->write(now_s(), "link_shaped", {{"backend", TL::str(f->backend())}});
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
  if (netns_) {
    for (int n = 0; n < scenario_.cluster.nodes; ++n) ctx.node_addrs[static_cast<std::size_t>(n)] = netns_->address(n);
    ctx.node_interface = NetnsCluster::kNodeInterface;
  }
  const auto* command = std::get_if<CommandWorkload>(&scenario_.workload);
  if (command && command->master_port) {
    ctx.master_port = *command->master_port;
  } else if (netns_) {
    // Probed where the master listens: in its node's namespace nobody but the run can
    // take the port between this probe and the workload's bind.
    const int master = command && !command->nodes.empty() ? command->nodes.front() : 0;
    NetnsCluster::in_netns(netns_->node_netns_fd(master), [&] { ctx.master_port = free_port(); });
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
  if (netns_) spec.netns_fd = netns_->node_netns_fd(l.node);
  if (names_) {
    spec.uts_fd = names_->uts_fd(l.node);
    spec.mnt_fd = names_->mnt_fd(l.node);
  }
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
    target.network = network_.get();
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
    fail(fmt::format("fault {} ({}) could not be applied: {}", spec.name, spec.type, e.what()), "error");
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
    fail(fmt::format("fault {} could not be reverted: {}", spec.name, e.what()), "error");
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

RunOutcome Run::execute() {
  // From the first step: a SIGINT during set-up is seen by the loop, which then unwinds
  // whatever set-up made (the journal holds it either way).
  SignalGuard signals;
  // A fault no backend of this host can do ends the run before anything is made (exit 3).
  for (const auto& f : scenario_.faults) {
    const auto* info = faults::find_fault_type(f.type);
    std::string why;
    if (info->host_backend && info->host_backend(f.params, &why).empty())
      throw HostError(fmt::format("fault {} ({}) cannot run on this host: {}", f.name, f.type, why));
  }
  if (auto lib = gpu_interposer_for(scenario_, self_exe()); !lib.empty() && !fs::exists(lib))
    throw HostError(fmt::format("this command workload has GPU faults, which need the CUDA interposer {}; this "
                                "chaosbench was built without it (no CUDA toolkit, or CHAOSBENCH_CUDA=OFF)", lib));
  out_dir_ = RunDirectory::resolve_out(options_.out_dir, scenario_.name);
  journal_ = std::make_unique<Journal>(Journal::default_directory(), run_id_, out_dir_);
  dir_ = std::make_unique<RunDirectory>(out_dir_, run_id_, *journal_);
  timeline_ = std::make_unique<TimelineLog>(dir_->out() + "/timeline.jsonl");
  std::string started_at = utc_timestamp_iso();
  timeline_->write(0, "run_started", {{"scenario", TL::str(scenario_.name)}, {"out", TL::str(dir_->out())},
                                      {"seed", TL::num(static_cast<double>(scenario_.seed))}});
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
  start_cluster_network();
  netns_used_ = netns_ != nullptr;
  // A fault this host cannot inject fails the run before anything starts (exit 3), never
  // halfway through it.
  for (const auto& f : scenario_.faults) {
    const auto* info = faults::find_fault_type(f.type);
    if (info->needs_namespaces && !netns_)
      throw HostError(fmt::format("fault {} ({}) needs the cluster in network namespaces, and this run has local "
                                  "processes: {}", f.name, f.type, cluster_why_local_));
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
  PriorityBoost boost;
  progress_ = std::make_unique<ProgressLine>(!options_.quiet);
  const double timeout_s = scenario_.timeout.seconds();
  bool timed_out = false;
  try {
    if (!SignalGuard::received()) start_workload();
    while (true) {
      if (SignalGuard::received()) break;
      double t = now_s();
      if (t > timeout_s) {
        timed_out = true;
        fail(fmt::format("the run passed its timeout of {}", common::to_string(scenario_.timeout)));
        break;
      }
      if (progress_->enabled()) progress_->show(progress_text(t));
      restart_due(t);
      group_restart_due(t);
      check_hang(t);
      for (const auto& action : schedule_.due(t, store_.max_step())) {
        if (action.kind == ScheduledAction::kApply) apply(action.occurrence);
        else revert(action.occurrence);
      }
      if (verdict_ == "error") break;  // a fault could not be applied: stop, do not half-run
      if (first_failure_s_ && t - *first_failure_s_ > kPeerGraceS) break;
      // Sleep until the next deadline; poll steps every 20 ms while a step trigger is
      // pending; otherwise wake only every 100 ms (signals, timeout) so the harness stays
      // off the CPU the workload measures on. Process exits wake it at once.
      auto wait = std::chrono::milliseconds(
          schedule_.waiting_for_step() || !pending_restarts_.empty() || group_restart_at_ ? 20 : 100);
      if (auto next = schedule_.next_deadline()) {
        auto until = std::chrono::duration<double>(std::max(0.0, *next - now_s()));
        // poll(2) counts whole milliseconds: sleep the last stretch precisely instead, so
        // faults apply within ~0.1 ms of their time (fault/apply_latency).
        if (until < std::chrono::milliseconds(2)) {
          std::this_thread::sleep_for(until);
          continue;
        }
        wait = std::min(wait, std::chrono::floor<std::chrono::milliseconds>(until) - std::chrono::milliseconds(1));
      }
      for (pid_t pid : supervisor_.wait_any(wait)) on_exit(pid);
      if (!supervisor_.any_running() && pending_restarts_.empty() && !group_restart_at_) break;
      if (only_services_left()) {  // the load is done: the replicas stop, on purpose
        for (std::size_t i = 0; i < launches_.size(); ++i)
          if (launches_[i].service && pids_[i] > 0) expected_exits_.insert(pids_[i]);
        break;
      }
    }
  } catch (const HostError& e) {
    fail(e.what(), "error");
    exit_code_ = kExitHost;
  } catch (const std::exception& e) {
    fail(e.what(), "error");
    exit_code_ = kExitUsage;
  }
  const double end_s = now_s();
  if (int sig = SignalGuard::received()) {
    verdict_ = "interrupted";
    reason_ = fmt::format("interrupted by signal {}", sig);
    spdlog::warn("{}: stopping every process and reverting every fault", reason_);
  }
  progress_.reset();
  // Unwind: faults first (the workload may still be reporting), then processes.
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
      fail(fmt::format("cleanup: {}", e.what()), "error");
    }
  }
  cgroups_.reset();
  for (auto it = link_shaping_.rbegin(); it != link_shaping_.rend(); ++it) {
    try {
      (*it)->revert();
    } catch (const std::exception& e) {
      fail(fmt::format("cleanup: cluster.link: {}", e.what()), "error");
    }
  }
  link_shaping_.clear();
  network_.reset();
  netns_.reset();
  dir_.reset();
  for (const auto& e : journal_->finish()) fail(fmt::format("cleanup: {}", e), "error");
  timeline_->write(now_s(), "run_finished", {{"verdict", TL::str(verdict_)}, {"timed_out", timed_out ? "true" : "false"}});

  ResultInputs in{scenario_, started_at, t0_wall_, end_s, schedule_, fault_records_, processes_, store_,
                  server_->malformed(), server_->malformed_examples()};
  RunOutcome out;
  out.run_dir = out_dir_;
  out.result = build_result(in, verdict_, reason_);
  out.result.run_id = run_id_;
  out.result.environment.blas = blas_;
  out.result.environment.cluster =
      fmt::format("{}, {}", netns_used_ ? "network namespaces (veth, bridge)" : "local processes on loopback",
                  cgroups_available_ ? fmt::format("node cgroups (v{}: {})", cgroup_version_, cgroup_list_)
                                     : fmt::format("no node cgroups ({})", cgroups_why_not_));
  if (out.result.verdict == "interrupted") out.exit_code = kExitInterrupted;
  else if (exit_code_ != kExitPass) out.exit_code = exit_code_;
  else if (out.result.verdict != "pass") out.exit_code = kExitCheckFailed;
  else out.exit_code = kExitPass;
  return out;
}

RunOutcome run_scenario(const Scenario& scenario, const RunOptions& options) {
  Run run(scenario, options);
  return run.execute();
}

}  // namespace chaosbench::harness
