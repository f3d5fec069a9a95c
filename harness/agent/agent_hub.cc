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

namespace chaosbench::harness {

using json = nlohmann::json;
using std::chrono::milliseconds;
using Clock = std::chrono::steady_clock;

AgentHub::AgentHub(std::string run_id, std::string secret, int nodes, RecordSink sink, milliseconds ping_every)
    : run_id_(std::move(run_id)), secret_(std::move(secret)), nodes_(nodes), sink_(std::move(sink)),
      ping_every_(ping_every), agents_(static_cast<std::size_t>(nodes)) {
  listen_fd_ = common::UniqueFd(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0));
  wake_fd_ = common::UniqueFd(::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK));
  int one = 1;
  ::setsockopt(listen_fd_.get(), SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  socklen_t len = sizeof(addr);
  if (!listen_fd_ || !wake_fd_ || ::bind(listen_fd_.get(), reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0 ||
      ::listen(listen_fd_.get(), 1024) != 0 || ::getsockname(listen_fd_.get(), reinterpret_cast<sockaddr*>(&addr), &len) != 0)
    throw AgentError(fmt::format("cannot listen for agents: {}", std::strerror(errno)));
  port_ = ntohs(addr.sin_port);
}

AgentHub::~AgentHub() { stop(milliseconds(2000)); }

// After the first launcher failure, the others get this long to join or fail too, so one
// error message names every host that cannot join, not only the first.
constexpr milliseconds kSettleAfterFailure{3000};

void AgentHub::accept_all(milliseconds timeout, const std::function<std::string(int)>& failed) {
  auto deadline = Clock::now() + timeout;
  std::map<int, std::string> why_not;
  auto waiting = [&] {
    int n = 0;
    for (int node = 0; node < nodes_; ++node) n += agents_[static_cast<std::size_t>(node)] || why_not.count(node) ? 0 : 1;
    return n;
  };
  while (waiting() > 0 && Clock::now() < deadline) {
    for (int node = 0; node < nodes_; ++node)
      if (!agents_[static_cast<std::size_t>(node)] && !why_not.count(node))
        if (std::string why = failed(node); !why.empty()) {
          why_not[node] = why;
          deadline = std::min(deadline, Clock::now() + kSettleAfterFailure);
        }
    pollfd p{listen_fd_.get(), POLLIN, 0};
    if (::poll(&p, 1, 50) <= 0) continue;
    accept_one();
  }
  int missing = 0;
  std::string text;
  for (int node = 0; node < nodes_; ++node) {
    if (agents_[static_cast<std::size_t>(node)]) continue;
    ++missing;
    auto it = why_not.find(node);
    text += fmt::format("\n  node {}: {}", node,
                        it != why_not.end() ? it->second
                        : why_not.empty()   ? fmt::format("no agent dialled back within {} s", timeout.count() / 1000.0)
                                            : std::string("no agent yet when the run gave up (see the other nodes)"));
  }
  if (missing > 0) throw AgentError(fmt::format("{} of {} agents did not join the run:{}", missing, nodes_, text));
}

// One connection off the listener, through the handshake. A stranger or a second agent for
// a node is turned away; another chaosbench version ends the wait (no retry can help).
void AgentHub::accept_one() {
  common::UniqueFd fd(::accept4(listen_fd_.get(), nullptr, nullptr, SOCK_CLOEXEC));
  if (!fd) return;
  auto link = std::make_unique<LinkChannel>(std::move(fd));
  try {
    AgentHello hello = controller_handshake(*link, secret_, run_id_, CHAOSBENCH_VERSION, nodes_, milliseconds(5000));
    auto& slot = agents_[static_cast<std::size_t>(hello.node)];
    if (slot) {
      spdlog::warn("a second agent for node {} ({}) was turned away", hello.node, hello.host);
      return;
    }
    slot = std::make_unique<Agent>();
    slot->link = std::move(link);
    slot->hello = std::move(hello);
  } catch (const VersionMismatch& e) {
    throw AgentError(e.what());
  } catch (const LinkError& e) {
    spdlog::warn("an agent link was refused: {}", e.what());
  }
}

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
    auto& a = *agents_[static_cast<std::size_t>(node)];
    if (!a.lost.empty()) continue;
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
    for (std::size_t i = 1; i < fds.size(); ++i)
      if (fds[i].revents != 0) read_agent(static_cast<int>(i - 1));
    if (Clock::now() >= next_ping) {
      ping_all();
      next_ping = Clock::now() + ping_every_;
    }
  }
}

void AgentHub::read_agent(int node) {
  auto& a = *agents_[static_cast<std::size_t>(node)];
  const bool open = a.link->pump();
  while (auto frame = a.link->next()) on_frame(node, *frame);
  if (!open || a.link->broken()) mark_lost(node, a.link->error());
}

void AgentHub::on_frame(int node, const Frame& frame) {
  auto& a = *agents_[static_cast<std::size_t>(node)];
  if (frame.type == MessageType::kRecords) return on_records(node, frame.payload);
  const double t3 = bench::wall_time_now();
  json j = json::parse(frame.payload, nullptr, false);
  if (!j.is_object()) return mark_lost(node, fmt::format("a {} frame that is not a JSON object",
                                                         message_type_name(static_cast<std::uint8_t>(frame.type))));
  std::lock_guard lock(mutex_);
  switch (frame.type) {
    case MessageType::kPong:
      a.clock.add({j.value("t0", 0.0), j.value("t1", 0.0), j.value("t2", 0.0), t3});
      break;
    case MessageType::kReply:
      if (j.contains("id") && j["id"].is_number_unsigned()) {
        const auto id = j["id"].get<std::uint64_t>();  // before j is moved from
        a.replies[id] = std::move(j);
      }
      break;
    case MessageType::kEvent:
      if (j.contains("time") && j["time"].is_number()) j["time"] = a.clock.to_controller(j["time"].get<double>());
      events_.push_back({node, std::move(j)});
      break;
    case MessageType::kBye:
      a.bye = true;
      if (j.contains("errors") && j["errors"].is_array())
        for (const auto& e : j["errors"]) a.bye_errors.push_back(fmt::format("host {}: {}", a.hello.host, e.dump()));
      break;
    default:
      break;
  }
  changed_.notify_all();
}

// Records as the workload wrote them, each moved onto the controller's clock.
void AgentHub::on_records(int node, const std::string& lines) {
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
    if (!decoded.ok) {
      malformed_.fetch_add(1);
      continue;
    }
    const int rank = std::visit([&](auto& r) {
      r.time -= offset;
      return r.rank;
    }, decoded.record);
    // As the local metrics server does: one runaway rank cannot grow the controller.
    if (records_by_rank_[rank]++ >= MetricsServer::kDefaultMaxRecordsPerRank) {
      malformed_.fetch_add(1);
      continue;
    }
    records_.fetch_add(1);
    if (sink_) sink_(decoded.record, received);
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
  if (!changed_.wait_for(lock, timeout, [&] { return a.replies.count(id) || !a.lost.empty(); }))
    throw AgentError(fmt::format("the agent on {} did not answer within {} ms", a.hello.host, timeout.count()));
  auto it = a.replies.find(id);
  if (it == a.replies.end()) throw AgentError(fmt::format("the agent on {} is gone: {}", a.hello.host, a.lost));
  json reply = std::move(it->second);
  a.replies.erase(it);
  if (!reply.value("ok", false))
    throw AgentError(fmt::format("host {}: {}", a.hello.host, reply.value("error", std::string("failed"))));
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
  for (auto& a : agents_) {
    if (!a || !a->lost.empty()) continue;
    try {
      a->link->send(MessageType::kBye, "{}");
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
