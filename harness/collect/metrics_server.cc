#include "harness/collect/metrics_server.h"

#include <algorithm>
#include <optional>
#include <cerrno>
#include <cstring>
#include <fmt/format.h>
#include <poll.h>
#include <spdlog/spdlog.h>
#include <stdexcept>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <system_error>
#include <unistd.h>
#include "common/values/errno_text.h"

namespace chaosbench::harness {
namespace {

using Clock = std::chrono::steady_clock;
using std::chrono::milliseconds;

constexpr std::size_t kMaxLine = 1024 * 1024;
constexpr std::size_t kExampleBytes = 200;
constexpr std::size_t kMaxExamples = 5;
constexpr std::size_t kReadChunk = 64 * 1024;
// Reads per connection and wake-up: a rank that writes without pause cannot starve others.
constexpr int kReadRounds = 4;
// stop() waits for connections to go idle; a process that never stops writing (one that
// escaped the supervisor) must not hold the harness forever, so draining ends this much
// after `drain_idle` whatever happens.
constexpr auto kDrainCap = std::chrono::seconds(5);
// After EMFILE and friends the listening socket stays readable; pausing accept() keeps the
// loop from spinning until descriptors are free again.
constexpr auto kAcceptPause = milliseconds(100);

using common::errno_text;

// Examples end up in logs and results.json (which must be valid UTF-8), so anything outside
// printable ASCII is spelled out.
std::string printable(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (unsigned char ch : s) {
    if (ch >= 0x20 && ch < 0x7f) {
      out.push_back(static_cast<char>(ch));
    } else {
      out += fmt::format("\\x{:02x}", ch);
    }
  }
  return out;
}

int ceil_ms(Clock::duration d) {
  auto ms = std::chrono::ceil<milliseconds>(d).count();
  return static_cast<int>(std::clamp<decltype(ms)>(ms, 1, 60'000));
}

// When the first of `connections` still active at `now` falls quiet (no byte for `idle`);
// nullopt when every one is quiet already.
template <class Connections>
std::optional<Clock::time_point> next_quiet(const Connections& connections, Clock::time_point now,
                                            milliseconds idle) {
  std::optional<Clock::time_point> next;
  for (const auto& c : connections) {
    const auto quiet_at = c.last_activity + idle;
    if (quiet_at > now) next = next ? std::min(*next, quiet_at) : quiet_at;
  }
  return next;
}

}  // namespace

struct MetricsServer::Connection {
  int fd = -1;
  std::uint64_t id = 0;
  std::uint64_t lines = 0;  // lines finished so far, for examples
  std::uint64_t records = 0;  // well-formed records delivered
  int rank = -1;            // from the last good record: names the sender in examples
  std::string partial;      // bytes after the last newline
  bool skipping = false;    // inside an over-long line, dropping bytes up to its newline
  Clock::time_point last_activity{};
};

MetricsServer::MetricsServer(std::string socket_path, RecordHandler on_record, std::uint64_t max_records_per_rank)
    : MetricsServer(std::move(socket_path), std::move(on_record), LineHandler(), max_records_per_rank) {}

std::unique_ptr<MetricsServer> MetricsServer::relay(std::string socket_path, LineHandler on_line) {
  return std::unique_ptr<MetricsServer>(
      new MetricsServer(std::move(socket_path), RecordHandler(), std::move(on_line), kDefaultMaxRecordsPerRank));
}

MetricsServer::MetricsServer(std::string socket_path, RecordHandler on_record, LineHandler on_line,
                             std::uint64_t max_records_per_rank)
    : path_(std::move(socket_path)), on_record_(std::move(on_record)), on_line_(std::move(on_line)),
      max_records_(max_records_per_rank) {
  sockaddr_un addr{};
  if (path_.empty() || path_.size() >= sizeof(addr.sun_path)) {
    throw std::runtime_error(fmt::format(
        "metrics socket '{}': a Unix socket path must be 1 to {} bytes, this one is {}", path_,
        sizeof(addr.sun_path) - 1, path_.size()));
  }
  auto fail = [&](std::string_view what) {
    int err = errno;
    close_fds();
    return std::runtime_error(fmt::format("metrics socket '{}': {}: {}", path_, what, errno_text(err)));
  };
  listen_fd_ = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
  if (listen_fd_ < 0) throw fail("socket");
  addr.sun_family = AF_UNIX;
  std::memcpy(addr.sun_path, path_.data(), path_.size());
  if (::bind(listen_fd_, reinterpret_cast<const sockaddr*>(&addr), sizeof(addr)) != 0) {
    throw fail("bind");
  }
  bound_ = true;
  // bind() applies the umask; fix the mode so it does not depend on who started us.
  if (::chmod(path_.c_str(), 0600) != 0) throw fail("chmod");
  if (::listen(listen_fd_, SOMAXCONN) != 0) throw fail("listen");
  wake_fd_ = ::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
  if (wake_fd_ < 0) throw fail("eventfd");
  try {
    thread_ = std::thread([this] { loop(); });
  } catch (...) {
    close_fds();
    throw;
  }
}

MetricsServer::~MetricsServer() {
  try {
    stop();
  } catch (...) {
    // stop() only throws if joining the thread fails; the destructor must not.
  }
}

std::string MetricsServer::address() const { return "unix:" + path_; }

void MetricsServer::stop(milliseconds drain_idle) {
  std::lock_guard lock(stop_mutex_);
  if (thread_.joinable()) {
    drain_idle_ms_.store(std::max<std::int64_t>(0, drain_idle.count()));
    stopping_.store(true);
    std::uint64_t one = 1;
    while (::write(wake_fd_, &one, sizeof(one)) < 0 && errno == EINTR) {
    }
    thread_.join();
  }
  close_fds();
}

std::vector<std::string> MetricsServer::malformed_examples() const {
  std::lock_guard lock(examples_mutex_);
  return examples_;
}

void MetricsServer::close_fds() noexcept {
  if (listen_fd_ >= 0) ::close(listen_fd_);
  if (wake_fd_ >= 0) ::close(wake_fd_);
  listen_fd_ = wake_fd_ = -1;
  if (bound_) ::unlink(path_.c_str());
  bound_ = false;
}

void MetricsServer::loop() {
  std::vector<Connection> connections;
  std::uint64_t next_id = 1;
  bool draining = false;
  milliseconds idle{0};
  Clock::time_point drain_end{};
  Clock::time_point accept_paused_until{};
  std::vector<pollfd> fds;
  try {
    for (;;) {
      const auto now = Clock::now();
      const bool accept_paused = now < accept_paused_until;
      fds.clear();
      fds.push_back(pollfd{wake_fd_, POLLIN, 0});
      fds.push_back(pollfd{accept_paused ? -1 : listen_fd_, POLLIN, 0});
      for (const auto& c : connections) fds.push_back(pollfd{c.fd, POLLIN, 0});

      int timeout = -1;
      bool last_look = false;  // every connection is idle: stop unless something is readable
      if (draining) {
        if (now >= drain_end) break;
        if (auto quiet = next_quiet(connections, now, idle)) {
          timeout = ceil_ms(std::min(drain_end, *quiet) - now);
        } else {
          timeout = 0;
          last_look = true;
        }
      }
      if (accept_paused) {
        int left = ceil_ms(accept_paused_until - now);
        timeout = timeout < 0 ? left : std::min(timeout, left);
      }

      int ready = ::poll(fds.data(), fds.size(), timeout);
      if (ready < 0) {
        if (errno == EINTR) continue;
        spdlog::error("metrics server: poll: {}", errno_text(errno));
        break;
      }
      if (ready == 0 && last_look) break;

      if (fds[0].revents & POLLIN) {
        std::uint64_t count;
        [[maybe_unused]] auto n = ::read(wake_fd_, &count, sizeof(count));
        if (stopping_.load() && !draining) {
          draining = true;
          idle = milliseconds(drain_idle_ms_.load());
          drain_end = Clock::now() + idle + kDrainCap;
        }
      }
      for (std::size_t i = 0; i < connections.size(); ++i) {
        if (fds[i + 2].revents != 0) read_connection(connections[i]);
      }
      std::erase_if(connections, [](const Connection& c) { return c.fd < 0; });
      if ((fds[1].revents & POLLIN) && !accept_all(connections, next_id)) {
        accept_paused_until = Clock::now() + kAcceptPause;
      }
    }
  } catch (const std::exception& e) {
    spdlog::error("metrics server: stopped reading: {}", e.what());
  }
  // Whatever is buffered counts as the connection's last line, as at EOF.
  const double now = bench::wall_time_now();
  for (auto& c : connections) {
    try {
      finish_connection(c, now);
    } catch (...) {
      if (c.fd >= 0) ::close(c.fd);
      c.fd = -1;
    }
  }
}

bool MetricsServer::accept_all(std::vector<Connection>& connections, std::uint64_t& next_id) {
  for (;;) {
    int fd = ::accept4(listen_fd_, nullptr, nullptr, SOCK_CLOEXEC | SOCK_NONBLOCK);
    if (fd >= 0) {
      Connection c;
      c.fd = fd;
      c.id = next_id++;
      c.last_activity = Clock::now();
      connections.push_back(std::move(c));
      continue;
    }
    if (errno == EINTR || errno == ECONNABORTED) continue;
    if (errno == EAGAIN || errno == EWOULDBLOCK) return true;
    spdlog::warn("metrics server: accept: {}", errno_text(errno));
    return false;
  }
}

bool MetricsServer::read_connection(Connection& c) {
  char buf[kReadChunk];
  for (int round = 0; round < kReadRounds;) {
    ssize_t n = ::read(c.fd, buf, sizeof(buf));
    if (n > 0) {
      c.last_activity = Clock::now();
      consume(c, buf, static_cast<std::size_t>(n), bench::wall_time_now());
      if (static_cast<std::size_t>(n) < sizeof(buf)) return true;
      ++round;
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return true;
    // EOF, or the peer vanished (ECONNRESET): what it wrote is in; finish its last line.
    finish_connection(c, bench::wall_time_now());
    return false;
  }
  return true;
}

void MetricsServer::consume(Connection& c, const char* data, std::size_t size, double received_at) {
  while (size > 0) {
    const auto* nl = static_cast<const char*>(std::memchr(data, '\n', size));
    const std::size_t take = nl != nullptr ? static_cast<std::size_t>(nl - data) : size;
    const std::size_t step = nl != nullptr ? take + 1 : size;
    if (c.skipping) {
      if (nl != nullptr) c.skipping = false;
    } else if (c.partial.size() + take > kMaxLine) {
      ++c.lines;
      std::string head = c.partial.substr(0, kExampleBytes);
      head.append(data, std::min(take, kExampleBytes - head.size()));
      count_malformed(c, "line longer than 1 MiB", head);
      c.partial.clear();
      c.skipping = nl == nullptr;
    } else if (nl == nullptr) {
      c.partial.append(data, take);
    } else if (c.partial.empty()) {
      handle_line(c, std::string_view(data, take), received_at);  // the common case: no copy
    } else {
      c.partial.append(data, take);
      std::string line = std::move(c.partial);
      c.partial.clear();
      handle_line(c, line, received_at);
    }
    data += step;
    size -= step;
  }
}

void MetricsServer::finish_connection(Connection& c, double received_at) {
  if (!c.skipping && !c.partial.empty()) {
    std::string line = std::move(c.partial);
    c.partial.clear();
    handle_line(c, line, received_at);
  }
  c.partial.clear();
  c.skipping = false;
  if (c.fd >= 0) ::close(c.fd);
  c.fd = -1;
}

void MetricsServer::handle_line(Connection& c, std::string_view line, double received_at) {
  ++c.lines;
  if (line.find_first_not_of(" \t\r") == std::string_view::npos) return;  // blank: no record
  if (on_line_) {
    ++c.records;
    records_.fetch_add(1);
    on_line_(line, received_at);
    return;
  }
  auto decoded = bench::decode_record(line);
  if (!decoded.ok) {
    count_malformed(c, decoded.error, line);
    return;
  }
  c.rank = std::visit([](const auto& r) { return r.rank; }, decoded.record);
  // Counted by rank, not by connection: a rank that reconnects starts no new allowance.
  if (records_by_rank_[c.rank]++ >= max_records_) {
    count_malformed(c, fmt::format("over {} records from rank {}: dropped", max_records_, c.rank), line);
    return;
  }
  ++c.records;
  records_.fetch_add(1);
  if (!on_record_) return;
  try {
    on_record_(decoded.record, received_at);
  } catch (const std::exception& e) {
    if (handler_failures_++ == 0) spdlog::error("metrics server: record handler failed: {}", e.what());
  } catch (...) {
    if (handler_failures_++ == 0) spdlog::error("metrics server: record handler failed");
  }
}

void MetricsServer::count_malformed(const Connection& c, std::string_view reason,
                                    std::string_view line) {
  malformed_.fetch_add(1);
  std::lock_guard lock(examples_mutex_);
  if (examples_.size() >= kMaxExamples) return;
  std::string who = c.rank >= 0 ? fmt::format("rank {}", c.rank) : fmt::format("connection {}", c.id);
  examples_.push_back(fmt::format("{} line {}: {}: {}", who, c.lines, reason,
                                  printable(line.substr(0, kExampleBytes))));
}

}  // namespace chaosbench::harness
