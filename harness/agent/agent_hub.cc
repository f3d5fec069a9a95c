#include "harness/agent/agent_hub.h"

#include <arpa/inet.h>
#include <cerrno>
#include <cstring>
#include <fmt/format.h>
#include <netinet/in.h>
#include <poll.h>
#include <spdlog/spdlog.h>
#include <sys/eventfd.h>
#include <sys/socket.h>

#include "common/json/json_values.h"
#include "harness/cluster/node_identity.h"

namespace chaosbench::harness {

using common::json_text;
using common::json_number;
using common::json_integer;
using common::json_flag;

namespace {

// What an agent's telemetry sends: samples of the link mesh and the node telemetry, each
// of its own node (the mesh's pairs from it, its node's telemetry, its host's steal).
bool telemetry_sample(const bench::Record& r, int node) {
  const auto* s = std::get_if<bench::Sample>(&r);
  if (!s) return false;
  const char* key = s->name.starts_with("net/pair_") ? "src"
                    : s->name.starts_with("node/")  ? "node"
                    : s->name == "host/cpu_steal"   ? "host"
                                                    : nullptr;
  auto it = key ? s->labels.find(key) : s->labels.end();
  return it != s->labels.end() && bench::label_to_string(it->second) == NodeIdentity::hostname(node);
}

}  // namespace

using json = nlohmann::json;
using std::chrono::milliseconds;
using Clock = std::chrono::steady_clock;

AgentHub::AgentHub(std::string run_id, std::string secret, int nodes, RecordSink sink, milliseconds ping_every,
                   milliseconds silence_limit, int port)
    : run_id_(std::move(run_id)), secret_(std::move(secret)), nodes_(nodes), sink_(std::move(sink)),
      ping_every_(ping_every), silence_limit_(silence_limit), agents_(static_cast<std::size_t>(nodes)) {
  listen_fd_ = common::UniqueFd(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0));
  wake_fd_ = common::UniqueFd(::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK));
  int one = 1;
  ::setsockopt(listen_fd_.get(), SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<std::uint16_t>(port));
  socklen_t len = sizeof(addr);
  if (!listen_fd_ || !wake_fd_ || ::bind(listen_fd_.get(), reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0 ||
      ::listen(listen_fd_.get(), 1024) != 0 || ::getsockname(listen_fd_.get(), reinterpret_cast<sockaddr*>(&addr), &len) != 0)
    throw AgentError(port > 0 ? fmt::format("cannot listen for agents on port {} (cluster.agent.port): {}", port, std::strerror(errno))
                              : fmt::format("cannot listen for agents: {}", std::strerror(errno)));
  port_ = ntohs(addr.sin_port);
}

AgentHub::~AgentHub() { stop(milliseconds(2000)); }

void AgentHub::start(int exchanges) {
  thread_ = std::thread([this] { loop(); });
  for (int i = 0; i < exchanges; ++i) {
    ping_all();
    std::this_thread::sleep_for(milliseconds(3));
  }
  std::unique_lock lock(mutex_);
  changed_.wait_for(lock, milliseconds(1000), [&] {
    for (const auto& a : agents_)
      if (a->lost.empty() && (!a->clock.estimate() || a->clock.estimate()->samples < static_cast<std::size_t>(exchanges)))
        return false;
    return true;
  });
}

void AgentHub::ping_all() {
  for (int node = 0; node < nodes_; ++node) {
    if (!agents_[static_cast<std::size_t>(node)] || lost(node)) continue;
    auto& a = *agents_[static_cast<std::size_t>(node)];
    try {
      a.link->send(MessageType::kPing, json{{"t0", bench::wall_time_now()}}.dump());
    } catch (const LinkError& e) {
      mark_lost(node, e.what());
    }
  }
}

// The I/O thread: every link's frames, and a ping to every agent each ping_every_.
void AgentHub::loop() {
  auto next_ping = Clock::now() + ping_every_;
  std::vector<pollfd> fds;
  while (!stopping_.load()) {
    fds.clear();
    fds.push_back({wake_fd_.get(), POLLIN, 0});
    for (const auto& a : agents_) fds.push_back({a->link->broken() ? -1 : a->link->fd(), POLLIN, 0});
    const auto left = std::chrono::duration_cast<milliseconds>(next_ping - Clock::now()).count();
    const int r = ::poll(fds.data(), fds.size(), static_cast<int>(std::max<long>(0, left)) + 1);
    if (r < 0 && errno != EINTR) break;
    for (std::size_t i = 1; i < fds.size(); ++i) {
      const int node = static_cast<int>(i - 1);
      if (fds[i].revents == 0) continue;
      // Nothing a peer sends may end this thread: a frame that breaks a rule loses its
      // agent, never the controller.
      try {
        read_agent(node);
      } catch (const std::exception& e) {
        mark_lost(node, fmt::format("a frame the controller could not take: {}", e.what()));
      }
    }
    if (Clock::now() >= next_ping) {
      ping_all();
      lose_silent();
      next_ping = Clock::now() + ping_every_;
    }
  }
}

// An agent that has sent nothing (not even a pong) for the silence limit is gone: a host
// that lost power keeps its TCP connection open for many minutes.
void AgentHub::lose_silent() {
  const auto now = Clock::now();
  for (int node = 0; node < nodes_; ++node) {
    const auto& a = *agents_[static_cast<std::size_t>(node)];
    if (now - a.last_heard > silence_limit_ && !lost(node))
      mark_lost(node, fmt::format("silent for {} ms (no answer to the controller's pings)", silence_limit_.count()));
  }
}

void AgentHub::read_agent(int node) {
  auto& a = *agents_[static_cast<std::size_t>(node)];
  const bool open = a.link->pump();
  a.last_heard = Clock::now();
  while (auto frame = a.link->next()) on_frame(node, *frame);
  if (!open || a.link->broken()) mark_lost(node, a.link->error());
}

void AgentHub::on_frame(int node, const Frame& frame) {
  auto& a = *agents_[static_cast<std::size_t>(node)];
  if (frame.type == MessageType::kRecords) return on_records(node, frame.payload, false);
  if (frame.type == MessageType::kTelemetry) return on_records(node, frame.payload, true);
  const double t3 = bench::wall_time_now();
  json j = json::parse(frame.payload, nullptr, false);
  if (!j.is_object()) return mark_lost(node, fmt::format("a {} frame that is not a JSON object",
                                                         message_type_name(static_cast<std::uint8_t>(frame.type))));
  std::lock_guard lock(mutex_);
  switch (frame.type) {
    case MessageType::kPong:
      a.clock.add({json_number(j, "t0"), json_number(j, "t1"), json_number(j, "t2"), t3});
      break;
    case MessageType::kReply: {
      // Only a reply someone waits for is kept: a peer cannot fill the map.
      const auto id = json_integer<std::int64_t>(j, "id", -1);
      if (a.awaited.count(static_cast<std::uint64_t>(id))) a.replies[static_cast<std::uint64_t>(id)] = std::move(j);
      break;
    }
    case MessageType::kEvent:
      if (json_text(j, "event") != "exit" || events_.size() >= kMaxEvents) break;
      if (j.contains("time") && j["time"].is_number()) j["time"] = a.clock.to_controller(j["time"].get<double>());
      events_.push_back({node, std::move(j)});
      break;
    case MessageType::kBye:
      a.bye = true;
      if (j.contains("errors") && j["errors"].is_array())
        for (const auto& e : j["errors"])
          if (a.bye_errors.size() < 100) a.bye_errors.push_back(fmt::format("host {}: {}", a.hello.host, e.dump()));
      break;
    default:
      break;
  }
  changed_.notify_all();
}

// Records as the workload wrote them, each moved onto the controller's clock. `own`: the
// agent's telemetry samples (link mesh, node telemetry), filed as the controller's own
// (rank -1), only under those families' names.
void AgentHub::on_records(int node, const std::string& lines, bool own) {
  double offset = 0;
  {
    std::lock_guard lock(mutex_);
    if (auto e = agents_[static_cast<std::size_t>(node)]->clock.estimate()) offset = e->offset_s;
  }
  const double received = bench::wall_time_now();
  std::size_t at = 0;
  while (at < lines.size()) {
    std::size_t end = lines.find('\n', at);
    if (end == std::string::npos) end = lines.size();
    auto decoded = bench::decode_record(std::string_view(lines).substr(at, end - at));
    at = end + 1;
    if (!decoded.ok || (own && !telemetry_sample(decoded.record, node))) {
      malformed_.fetch_add(1);
      continue;
    }
    const int rank = std::visit([&](auto& r) {
      if (r.time > 0) r.time -= offset;  // no time: the receive time stands (the protocol's rule)
      if (own) r.rank = -1;
      return r.rank;
    }, decoded.record);
    // As the local metrics server does: one runaway rank (or agent) cannot grow the controller.
    if ((own ? telemetry_by_node_[node] : records_by_rank_[rank])++ >= MetricsServer::kDefaultMaxRecordsPerRank) {
      malformed_.fetch_add(1);
      continue;
    }
    records_.fetch_add(1);
    if (!sink_) continue;
    try {
      sink_(decoded.record, received);
    } catch (const std::exception& e) {
      if (sink_failures_++ == 0) spdlog::error("agent hub: the record sink failed: {}", e.what());
    }
  }
}

void AgentHub::mark_lost(int node, const std::string& why) {
  auto& a = *agents_[static_cast<std::size_t>(node)];
  {
    std::lock_guard lock(mutex_);
    if (!a.lost.empty()) return;
    a.lost = why.empty() ? std::string("the link broke") : why;
    if (!a.bye) events_.push_back({node, json{{"event", "lost"}, {"why", a.lost}}});
  }
  a.link->close(why);
  changed_.notify_all();
}

std::uint64_t AgentHub::send(int node, json command) {
  if (!agents_.at(static_cast<std::size_t>(node))) throw AgentError(fmt::format("node {} has no agent", node));
  auto& a = *agents_[static_cast<std::size_t>(node)];
  std::uint64_t id;
  {
    std::lock_guard lock(mutex_);
    if (!a.lost.empty()) throw AgentError(fmt::format("the agent on {} is gone: {}", a.hello.host, a.lost));
    id = next_id_++;
    a.awaited.insert(id);
  }
  command["id"] = id;
  try {
    a.link->send(MessageType::kCommand, command.dump());
  } catch (const LinkError& e) {
    mark_lost(node, e.what());
    throw AgentError(fmt::format("the agent on {} is gone: {}", a.hello.host, e.what()));
  }
  return id;
}

json AgentHub::wait_reply(int node, std::uint64_t id, milliseconds timeout) {
  auto& a = *agents_.at(static_cast<std::size_t>(node));
  std::unique_lock lock(mutex_);
  const bool came = changed_.wait_for(lock, timeout, [&] { return a.replies.count(id) || !a.lost.empty(); });
  a.awaited.erase(id);  // a late reply is dropped on arrival
  if (!came) throw AgentError(fmt::format("the agent on {} did not answer within {} ms", a.hello.host, timeout.count()));
  auto it = a.replies.find(id);
  if (it == a.replies.end()) throw AgentError(fmt::format("the agent on {} is gone: {}", a.hello.host, a.lost));
  json reply = std::move(it->second);
  a.replies.erase(it);
  if (!json_flag(reply, "ok"))
    throw AgentError(fmt::format("host {}: {}", a.hello.host, json_text(reply, "error", "failed")));
  return reply;
}

json AgentHub::call(int node, json command, milliseconds timeout) {
  return wait_reply(node, send(node, std::move(command)), timeout);
}

std::vector<AgentEvent> AgentHub::wait_events(milliseconds timeout) {
  std::unique_lock lock(mutex_);
  changed_.wait_for(lock, timeout, [&] { return !events_.empty(); });
  std::vector<AgentEvent> out(std::make_move_iterator(events_.begin()), std::make_move_iterator(events_.end()));
  events_.clear();
  return out;
}

std::optional<ClockEstimate> AgentHub::clock(int node) const {
  std::lock_guard lock(mutex_);
  const auto& a = agents_.at(static_cast<std::size_t>(node));
  return a ? a->clock.estimate() : std::nullopt;
}

bool AgentHub::lost(int node) const {
  std::lock_guard lock(mutex_);
  const auto& a = agents_.at(static_cast<std::size_t>(node));
  return !a || !a->lost.empty();
}

std::vector<std::string> AgentHub::stop(milliseconds timeout) {
  std::vector<std::string> errors;
  if (stopped_) return errors;
  stopped_ = true;
  for (int node = 0; node < nodes_; ++node) {
    if (lost(node)) continue;
    try {
      agents_[static_cast<std::size_t>(node)]->link->send(MessageType::kBye, "{}");
    } catch (const LinkError&) {
    }
  }
  if (thread_.joinable()) {
    std::unique_lock lock(mutex_);
    changed_.wait_for(lock, timeout, [&] {
      for (const auto& a : agents_)
        if (a && !a->bye && a->lost.empty()) return false;
      return true;
    });
    for (const auto& a : agents_) {
      if (!a) continue;
      for (const auto& e : a->bye_errors) errors.push_back(e);
      if (!a->bye && a->lost.empty())
        errors.push_back(fmt::format("host {}: the agent did not confirm its clean-up within {} ms", a->hello.host,
                                     timeout.count()));
    }
  }
  stopping_ = true;
  const std::uint64_t one = 1;
  [[maybe_unused]] auto w = ::write(wake_fd_.get(), &one, sizeof(one));
  if (thread_.joinable()) thread_.join();
  for (auto& a : agents_)
    if (a) a->link->close("the run ended");
  return errors;
}

}  // namespace chaosbench::harness
