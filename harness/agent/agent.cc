// The agent's life: connect, handshake, serve, clean up (agent.h). The commands are in
// agent_commands.cc.
#include "harness/agent/agent.h"

#include <arpa/inet.h>
#include <csignal>
#include <netinet/in.h>
#include <sys/socket.h>
#include <fmt/format.h>
#include <poll.h>
#include <spdlog/spdlog.h>
#include <sys/stat.h>
#include <unistd.h>

#include <nlohmann/json.hpp>

#include "bench/protocol/record.h"
#include "common/process/crash_point.h"
#include "faults/network/network_plane.h"
#include "harness/agent/link_handshake.h"
#include "harness/process/signal_guard.h"

namespace chaosbench::harness {

using json = nlohmann::json;
using std::chrono::milliseconds;
using Clock = std::chrono::steady_clock;

namespace {

// Records wait at most this long in the agent before they leave in one frame; a batch
// also leaves once it is this large.
constexpr milliseconds kRecordsLinger{5};
constexpr std::size_t kRecordsBatch = 256 * 1024;
constexpr std::size_t kRecordsBufferMax = 64u << 20;

std::string host_name() {
  char buf[256] = {};
  ::gethostname(buf, sizeof(buf) - 1);
  return buf;
}

// The local IPv4 address of a connected socket: this host's address on its route to the
// controller, which its peers reach it at too.
std::string local_address_of(int fd) {
  sockaddr_in a{};
  socklen_t len = sizeof(a);
  char text[INET_ADDRSTRLEN] = {};
  if (::getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len) != 0 || a.sin_family != AF_INET) return "";
  ::inet_ntop(AF_INET, &a.sin_addr, text, sizeof(text));
  return text;
}

}  // namespace

Agent::Agent(AgentOptions options) : options_(std::move(options)) {
  // Only the ranks are forked here; any other child is an orphan of theirs.
  supervisor_.set_kill_adopted_orphans(true);
  // Journaled, and in the node's cgroups, before it may exec (as on the local site).
  supervisor_.set_on_forked([this](pid_t pid) {
    std::string cgroup;
    for (const char* c : {"freezer", "pids", "cpu", "memory"})
      if (cgroup.empty() && cgroups_ && cgroups_->available()) cgroup = cgroups_->dir(0, c);
    process_entries_.push_back(journal_->record_process_group(pid, cgroup));
    if (cgroups_ && cgroups_->available()) cgroups_->join(0, pid);
  });
}

Agent::~Agent() { stop_everything(); }

int Agent::run() {
  common::set_crash_role(fmt::format("node{}", options_.node));
  try {
    link_ = std::make_unique<LinkChannel>(
        dial_link(options_.controller_address, options_.controller_port, milliseconds(5000)), options_.timeout);
    AgentHello hello;
    hello.version = CHAOSBENCH_VERSION;
    hello.run_id = options_.run_id;
    hello.host = options_.host;
    hello.node = options_.node;
    hello.hostname = host_name();
    hello.address = local_address_of(link_->fd());
    hello.pid = ::getpid();
    agent_handshake(*link_, options_.secret, hello, milliseconds(10000));
  } catch (const LinkError& e) {
    spdlog::error("agent {}: {}", options_.host, e.what());
    return 3;
  }
  options_.secret.assign(options_.secret.size(), '\0');  // not needed after the handshake
  common::crash_point("agent.joined");  // nothing made or journaled yet
  make_runtime_dir();
  serve();
  const auto errors = stop_everything();
  for (const auto& e : errors) spdlog::error("agent {}: cleanup: {}", options_.host, e);
  if (bye_) {
    try {
      link_->send(MessageType::kBye, json{{"errors", errors}}.dump());
    } catch (const LinkError&) {
    }
  }
  return bye_ && errors.empty() ? 0 : 1;
}

// The agent's state lives in a runtime directory of its own, named as a run's is
// (/tmp/chaosbench-<run>-n<node>: its metrics socket and the ranks' control blocks), and
// its journal sits beside the runs' journals, so `chaosbench cleanup` on this host treats
// a dead agent as it treats a dead run.
void Agent::make_runtime_dir() {
  const std::string run = fmt::format("{}-n{}", options_.run_id, options_.node);
  runtime_dir_ = "/tmp/chaosbench-" + run;
  journal_ = std::make_unique<Journal>(Journal::default_directory(), run, runtime_dir_);
  journal_->record_path(runtime_dir_);
  if (::mkdir(runtime_dir_.c_str(), 0700) != 0)
    throw std::runtime_error(fmt::format("cannot make {}: {}", runtime_dir_, std::strerror(errno)));
  // The ranks' lines go to the controller as they came: it decodes and judges each once.
  auto on_line = [this](std::string_view line, double) { queue_line(line); };
  metrics_ = MetricsServer::relay(runtime_dir_ + "/metrics.sock", on_line);
}

void Agent::queue_line(std::string_view line, bool own) {
  std::lock_guard lock(records_mutex_);
  std::string& buffer = own ? telemetry_lines_ : records_;
  // Bounded while the link is slow: past it, lines are dropped and counted (said at the end).
  if (buffer.size() > kRecordsBufferMax) {
    ++records_dropped_;
    return;
  }
  buffer.append(line);
  buffer.push_back('\n');
}

// The loop: frames from the controller, exits of ranks, records out, the dead-man switch.
void Agent::serve() {
  last_heard_ = Clock::now();
  while (!bye_) {
    pollfd p{link_->fd(), POLLIN, 0};
    const int r = ::poll(&p, 1, static_cast<int>(kRecordsLinger.count()));
    if (r > 0 && !link_->pump() && !link_->broken()) continue;
    while (auto frame = link_->next()) {
      last_heard_ = Clock::now();
      handle(*frame);
      if (bye_) break;
    }
    report_exits();
    flush_records();
    if (link_->broken() && !bye_) {
      spdlog::error("agent {}: {}; reverting every fault and stopping every rank", options_.host, link_->error());
      return;
    }
    if (Clock::now() - last_heard_ > options_.timeout) {
      spdlog::error("agent {}: the controller has been silent for {} ms (agent_timeout); reverting every fault and "
                    "stopping every rank", options_.host, options_.timeout.count());
      link_->close("dead-man switch");
      return;
    }
    if (SignalGuard::received()) {
      spdlog::error("agent {}: interrupted; reverting every fault and stopping every rank", options_.host);
      return;
    }
  }
}

void Agent::handle(const Frame& frame) {
  switch (frame.type) {
    case MessageType::kPing: {
      const double t1 = bench::wall_time_now();
      const json ping = json::parse(frame.payload, nullptr, false);
      const double t0 = ping.is_object() ? ping.value("t0", 0.0) : 0.0;
      link_->send(MessageType::kPong, json{{"t0", t0}, {"t1", t1}, {"t2", bench::wall_time_now()}}.dump());
      return;
    }
    case MessageType::kCommand: {
      const json c = json::parse(frame.payload, nullptr, false);
      json reply = execute(c);
      reply["id"] = c.is_object() ? c.value("id", json()) : json();
      link_->send(MessageType::kReply, reply.dump());
      return;
    }
    case MessageType::kBye: bye_ = true; return;
    default:
      link_->close(fmt::format("unexpected {} frame", message_type_name(static_cast<std::uint8_t>(frame.type))));
  }
}

void Agent::send_event(const json& event) {
  try {
    link_->send(MessageType::kEvent, event.dump());
  } catch (const LinkError&) {  // the loop sees the broken link and cleans up
  }
}

void Agent::report_exits() {
  for (pid_t pid : supervisor_.poll()) {
    const auto& s = supervisor_.status(pid);
    if (s.running) continue;
    send_event({{"event", "exit"}, {"pid", pid}, {"time", bench::wall_time_now()},
                {"exit_code", s.exit_code ? json(*s.exit_code) : json()},
                {"signal", s.signal ? json(*s.signal) : json()}});
  }
}

void Agent::flush_records() {
  std::string batch, own;
  {
    std::lock_guard lock(records_mutex_);
    batch.swap(records_);
    own.swap(telemetry_lines_);
  }
  try {
    send_lines(MessageType::kRecords, batch);
    send_lines(MessageType::kTelemetry, own);
  } catch (const LinkError&) {
  }
}

// Whole lines, at most kRecordsBatch bytes a frame (a line is at most 1 MiB).
void Agent::send_lines(MessageType type, const std::string& batch) {
  for (std::size_t at = 0; at < batch.size();) {
    std::size_t end = std::min(batch.size(), at + kRecordsBatch);
    if (end < batch.size()) end = batch.rfind('\n', end - 1) + 1;
    if (end <= at) end = batch.find('\n', at) + 1;
    link_->send(type, std::string_view(batch).substr(at, end - at));
    at = end;
  }
}

// Faults out first (newest first), then the ranks, then what the run made here. Idempotent.
std::vector<std::string> Agent::stop_everything() {
  std::vector<std::string> errors;
  if (stopped_) return errors;
  stopped_ = true;
  for (auto it = faults_.rbegin(); it != faults_.rend(); ++it) {
    try {
      it->second->revert();
    } catch (const std::exception& e) {
      errors.push_back(fmt::format("fault {}: {}", it->first, e.what()));
    }
  }
  faults_.clear();
  plane_.reset();
  telemetry_.reset();  // before the ranks go: it reads their cgroup
  common::crash_point("agent.stopping");  // faults reverted, ranks still running
  supervisor_.stop_all();
  common::crash_point("agent.ranks_stopped");  // ranks gone, cgroups and state still here
  if (metrics_) metrics_->stop();
  if (records_dropped_ > 0)
    errors.push_back(fmt::format("{} records were dropped: the link to the controller could not keep up", records_dropped_));
  if (link_ && !link_->broken()) {
    report_exits();
    flush_records();
  }
  control_fds_.clear();
  cgroups_.reset();  // its ranks are gone: the directories can go
  if (journal_)
    for (const auto& e : journal_->finish()) errors.push_back(e);
  return errors;
}

}  // namespace chaosbench::harness
