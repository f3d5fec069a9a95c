#include "bench/protocol/metrics_client.h"

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

namespace chaosbench::bench {
namespace {

constexpr std::size_t kFlushThreshold = 64 * 1024;

int connect_unix(std::string_view path) {
  sockaddr_un addr{};
  if (path.empty() || path.size() >= sizeof(addr.sun_path)) return -1;
  int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return -1;
  addr.sun_family = AF_UNIX;
  std::memcpy(addr.sun_path, path.data(), path.size());
  if (::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0) {
    ::close(fd);
    return -1;
  }
  return fd;
}

}  // namespace

MetricsClient MetricsClient::from_environment() {
  const char* addr = std::getenv("CHAOSBENCH_METRICS");
  const char* rank = std::getenv("CHAOSBENCH_RANK");
  return MetricsClient(addr ? addr : "", rank ? std::atoi(rank) : 0);
}

MetricsClient::MetricsClient(std::string_view address, int rank) : rank_(rank) {
  constexpr std::string_view kUnix = "unix:";
  if (address.starts_with(kUnix)) fd_ = connect_unix(address.substr(kUnix.size()));
}

MetricsClient::MetricsClient(MetricsClient&& other) noexcept
    : fd_(other.fd_), rank_(other.rank_), buffer_(std::move(other.buffer_)) {
  other.fd_ = -1;
}

MetricsClient& MetricsClient::operator=(MetricsClient&& other) noexcept {
  if (this != &other) {
    flush();
    if (fd_ >= 0) ::close(fd_);
    fd_ = other.fd_;
    rank_ = other.rank_;
    buffer_ = std::move(other.buffer_);
    other.fd_ = -1;
  }
  return *this;
}

MetricsClient::~MetricsClient() {
  flush();
  if (fd_ >= 0) ::close(fd_);
}

void MetricsClient::sample(std::string_view name, double value, std::string_view unit,
                           Labels labels, double time) {
  if (fd_ < 0) return;
  append(Sample{rank_, time > 0 ? time : wall_time_now(), std::string(name), value,
                std::string(unit), std::move(labels)});
}

void MetricsClient::event(std::string_view name, Labels fields, double time) {
  if (fd_ < 0) return;
  append(Event{rank_, time > 0 ? time : wall_time_now(), std::string(name), std::move(fields)});
}

void MetricsClient::append(const Record& record) {
  buffer_ += encode_record(record);
  if (buffer_.size() >= kFlushThreshold) flush();
}

void MetricsClient::flush() {
  std::size_t done = 0;
  while (fd_ >= 0 && done < buffer_.size()) {
    ssize_t n = ::send(fd_, buffer_.data() + done, buffer_.size() - done, MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      // The harness went away: stop reporting rather than fail the workload.
      ::close(fd_);
      fd_ = -1;
      break;
    }
    done += static_cast<std::size_t>(n);
  }
  buffer_.clear();
}

}  // namespace chaosbench::bench
