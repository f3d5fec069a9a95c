#include "harness/site/rendezvous_server.h"

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cstring>
#include <stdexcept>

#include <fmt/format.h>
#include <netinet/in.h>
#include <poll.h>
#include <spdlog/spdlog.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

namespace chaosbench::harness {
namespace {

namespace wire = common::store_wire;
using wire::Message;
using wire::Op;
using wire::Status;
using Clock = std::chrono::steady_clock;

Message reply(Status s, std::vector<std::string> fields = {}) {
  return Message{static_cast<std::uint8_t>(s), std::move(fields)};
}

Message error(const std::string& why) { return reply(Status::kError, {why}); }

// Milliseconds from a decimal field, clamped to kMaxWait; nullopt when not a number.
std::optional<std::chrono::milliseconds> parse_timeout(const std::string& text) {
  long long ms = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), ms);
  if (ec != std::errc() || end != text.data() + text.size() || ms < 0) return std::nullopt;
  return std::min(std::chrono::milliseconds(ms), wire::kMaxWait);
}

// Compares without stopping at the first difference, so the time taken says nothing of
// how much of a guess was right (the length is no secret).
bool same_token(const std::string& a, const std::string& b) {
  if (a.size() != b.size() || b.empty()) return false;
  unsigned char diff = 0;
  for (std::size_t i = 0; i < a.size(); ++i) diff |= static_cast<unsigned char>(a[i] ^ b[i]);
  return diff == 0;
}

}  // namespace

RendezvousServer::RendezvousServer(std::string token, Limits limits) : token_(std::move(token)), limits_(limits) {
  listen_fd_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (listen_fd_ < 0) throw std::runtime_error(fmt::format("rendezvous store: socket: {}", std::strerror(errno)));
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_ANY);
  addr.sin_port = htons(static_cast<std::uint16_t>(limits_.port));
  socklen_t len = sizeof addr;
  if (::bind(listen_fd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 || ::listen(listen_fd_, 128) != 0 ||
      ::getsockname(listen_fd_, reinterpret_cast<sockaddr*>(&addr), &len) != 0) {
    const std::string why = std::strerror(errno);
    ::close(listen_fd_);
    throw std::runtime_error(limits_.port > 0 ? fmt::format("rendezvous store: cannot listen on port {}: {}", limits_.port, why)
                                              : fmt::format("rendezvous store: cannot listen: {}", why));
  }
  port_ = ntohs(addr.sin_port);
  acceptor_ = std::thread([this] { accept_loop(); });
}

RendezvousServer::~RendezvousServer() { stop(); }

void RendezvousServer::stop() {
  if (stopping_.exchange(true)) return;
  if (acceptor_.joinable()) acceptor_.join();
  ::close(listen_fd_);
  {
    // Wakes every connection thread: reads return, waits see stopping_.
    std::lock_guard lock(connections_mutex_);
    for (auto& c : connections_) ::shutdown(c->fd, SHUT_RDWR);
  }
  {
    std::lock_guard lock(mutex_);
    changed_.notify_all();
  }
  reap(true);
}

// Joins finished connection threads (all of them when `all`, after stop()).
void RendezvousServer::reap(bool all) {
  std::list<std::unique_ptr<Connection>> finished;
  {
    std::lock_guard lock(connections_mutex_);
    for (auto it = connections_.begin(); it != connections_.end();) {
      if (all || (*it)->done.load()) finished.splice(finished.end(), connections_, it++);
      else ++it;
    }
  }
  for (auto& c : finished) {
    c->thread.join();
    ::close(c->fd);
  }
}

// Polls so that stop() needs no wake-up of its own; 200 ms is how late a stop may be.
void RendezvousServer::accept_loop() {
  while (!stopping_.load()) {
    pollfd p{listen_fd_, POLLIN, 0};
    if (::poll(&p, 1, 200) <= 0) continue;
    const int fd = ::accept4(listen_fd_, nullptr, nullptr, SOCK_CLOEXEC);
    if (fd < 0) continue;
    reap(false);
    std::lock_guard lock(connections_mutex_);
    if (connections_.size() >= limits_.max_connections) {
      spdlog::warn("rendezvous store: {} connections already: one more refused", connections_.size());
      ::close(fd);
      ++dropped_;
      continue;
    }
    auto c = std::make_unique<Connection>();
    c->fd = fd;
    Connection* raw = c.get();
    connections_.push_back(std::move(c));
    raw->thread = std::thread([this, raw] { serve(raw); });
  }
}

// The token comes first, within hello_timeout: a client that connects and says nothing
// holds no slot for long.
bool RendezvousServer::authenticate(int fd) {
  timeval tv{};
  tv.tv_sec = limits_.hello_timeout.count() / 1000;
  tv.tv_usec = static_cast<suseconds_t>((limits_.hello_timeout.count() % 1000) * 1000);
  ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  std::string body;
  if (!wire::read_frame(fd, &body, wire::kMaxKey)) return false;
  auto hello = wire::decode(body);
  const bool ok = hello && hello->code == static_cast<std::uint8_t>(Op::kHello) && hello->fields.size() == 1 &&
                  same_token(hello->fields[0], token_);
  wire::write_all(fd, wire::encode(ok ? reply(Status::kOk) : error("wrong token")));
  tv = timeval{};
  ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  return ok;
}

void RendezvousServer::serve(Connection* c) {
  bool clean = authenticate(c->fd);
  std::string body;
  while (clean && !stopping_.load()) {
    if (!wire::read_frame(c->fd, &body)) {
      clean = false;  // the peer went, or sent a length out of bounds
      break;
    }
    auto request = wire::decode(body);
    auto answer = request ? handle(*request) : std::nullopt;
    if (!answer || !wire::write_all(c->fd, wire::encode(*answer))) {
      clean = false;
      break;
    }
  }
  if (!clean && !stopping_.load()) ++dropped_;
  ::shutdown(c->fd, SHUT_RDWR);
  c->done.store(true);
}

std::optional<Message> RendezvousServer::handle(const Message& r) {
  const auto& f = r.fields;
  // Sizes out of bounds in a well-formed frame are refused with a reason; the
  // connection stays in step, so it stays.
  for (const auto& field : f)
    if (field.size() > wire::kMaxValue)
      return error(fmt::format("a value of {} bytes exceeds the limit of {}", field.size(), wire::kMaxValue));
  switch (static_cast<Op>(r.code)) {
    case Op::kSet:
    case Op::kAddOnce:
      if (f.size() != 2 || f[0].empty()) return std::nullopt;
      if (f[0].size() > wire::kMaxKey)
        return error(fmt::format("a key of {} bytes exceeds the limit of {}", f[0].size(), wire::kMaxKey));
      return set(f[0], f[1], static_cast<Op>(r.code) == Op::kAddOnce);
    case Op::kGet: {
      auto timeout = f.size() == 2 ? parse_timeout(f[1]) : std::nullopt;
      if (!timeout) return std::nullopt;
      return get(f[0], *timeout);
    }
    case Op::kWait: {
      auto timeout = !f.empty() ? parse_timeout(f[0]) : std::nullopt;
      if (!timeout) return std::nullopt;
      return wait(std::vector<std::string>(f.begin() + 1, f.end()), *timeout);
    }
    case Op::kRemove: {
      if (f.size() != 1) return std::nullopt;
      std::lock_guard lock(mutex_);
      if (auto it = data_.find(f[0]); it != data_.end()) {
        bytes_ -= it->first.size() + it->second.size();
        data_.erase(it);
      }
      return reply(Status::kOk);
    }
    case Op::kList:
      if (f.size() != 1) return std::nullopt;
      return list(f[0]);
    default:
      return std::nullopt;
  }
}

// A full store refuses the request but keeps the connection: the client hears why.
Message RendezvousServer::set(const std::string& key, const std::string& value, bool once) {
  std::lock_guard lock(mutex_);
  auto it = data_.find(key);
  if (it != data_.end() && once) return reply(Status::kOk, {it->second});
  const std::size_t old = it == data_.end() ? 0 : key.size() + it->second.size();
  if (it == data_.end() && data_.size() >= limits_.max_keys)
    return error(fmt::format("the store holds {} keys, its limit", data_.size()));
  if (bytes_ - old + key.size() + value.size() > limits_.max_bytes)
    return error(fmt::format("the store would hold more than {} bytes", limits_.max_bytes));
  bytes_ = bytes_ - old + key.size() + value.size();
  data_[key] = value;
  changed_.notify_all();
  return reply(Status::kOk, once ? std::vector<std::string>{value} : std::vector<std::string>{});
}

Message RendezvousServer::get(const std::string& key, std::chrono::milliseconds timeout) {
  std::unique_lock lock(mutex_);
  const auto deadline = Clock::now() + timeout;
  while (!stopping_.load()) {
    if (auto it = data_.find(key); it != data_.end()) return reply(Status::kOk, {it->second});
    if (changed_.wait_until(lock, deadline) == std::cv_status::timeout && !data_.count(key)) break;
  }
  return reply(Status::kTimeout);
}

Message RendezvousServer::wait(const std::vector<std::string>& keys, std::chrono::milliseconds timeout) {
  std::unique_lock lock(mutex_);
  auto all = [&] { return std::all_of(keys.begin(), keys.end(), [&](const auto& k) { return data_.count(k) > 0; }); };
  const bool ok = changed_.wait_until(lock, Clock::now() + timeout, [&] { return stopping_.load() || all(); });
  return reply(ok && all() ? Status::kOk : Status::kTimeout);
}

Message RendezvousServer::list(const std::string& prefix) {
  std::lock_guard lock(mutex_);
  Message m = reply(Status::kOk);
  std::size_t size = 0;
  for (auto it = data_.lower_bound(prefix); it != data_.end() && it->first.starts_with(prefix); ++it) {
    size += it->first.size() + it->second.size() + 8;
    if (size > wire::kMaxFrame - 64) return error(fmt::format("the keys under \"{}\" exceed one reply", prefix));
    m.fields.push_back(it->first);
    m.fields.push_back(it->second);
  }
  return m;
}

}  // namespace chaosbench::harness
