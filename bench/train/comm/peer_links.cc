#include "bench/train/comm/peer_links.h"

#include <fcntl.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include <fmt/format.h>

#include "bench/common/thread_priority.h"
#include "bench/train/comm/gradient_reducer.h"
#include "bench/train/comm/tcp_links.h"

namespace chaosbench::bench::train {
namespace {

constexpr const char* kWhat = "pipeline links";

struct Header {
  std::uint32_t tag;
  std::uint32_t reserved;
  std::uint64_t bytes;
};

// Reads exactly n bytes; false at EOF or on an error (the receive timeout included).
bool read_all(int fd, void* data, std::size_t n) {
  auto* p = static_cast<char*>(data);
  while (n > 0) {
    const ssize_t got = ::recv(fd, p, n, 0);
    if (got > 0) {
      p += got;
      n -= static_cast<std::size_t>(got);
    } else if (got < 0 && errno == EINTR) {
      continue;
    } else {
      return false;
    }
  }
  return true;
}

}  // namespace

PeerLinks::PeerLinks(gloo::rendezvous::Store& store, const std::string& key, int rank, int world,
                     const std::string& host, std::chrono::milliseconds timeout,
                     std::function<bool(std::uint32_t tag, std::uint64_t bytes)> accept)
    : rank_(rank), world_(world), timeout_(timeout), accept_(std::move(accept)),
      fds_(static_cast<std::size_t>(world), -1), broken_(static_cast<std::size_t>(world)) {
  const auto deadline = TcpClock::now() + timeout;
  const int listener = listen_and_publish(store, fmt::format("{}/{}", key, rank), host, kWhat);
  try {
    for (int peer = rank + 1; peer < world; ++peer)
      fds_[static_cast<std::size_t>(peer)] =
          connect_published(store, fmt::format("{}/{}", key, peer), peer, rank, timeout, deadline, kWhat);
    for (int accepted = 0; accepted < rank; ++accepted) {
      int who = -1;
      const int fd = accept_hello(listener, timeout, deadline, who, kWhat);
      if (who < 0 || who >= rank || fds_[static_cast<std::size_t>(who)] >= 0) {
        ::close(fd);
        throw CollectiveError(fmt::format("{}: an unexpected connection from rank {}", kWhat, who));
      }
      fds_[static_cast<std::size_t>(who)] = fd;
    }
    if (::pipe2(wake_, O_CLOEXEC) != 0) throw CollectiveError(fmt::format("{}: pipe: {}", kWhat, std::strerror(errno)));
    const ScopedThreadNice nice(kCommThreadNice);  // the receiver moves the bytes the step waits for
    receiver_ = std::thread([this] { receive_loop(); });
  } catch (...) {
    ::close(listener);
    for (int fd : fds_)
      if (fd >= 0) ::close(fd);
    for (int fd : wake_)
      if (fd >= 0) ::close(fd);
    throw;
  }
  ::close(listener);
}

PeerLinks::~PeerLinks() {
  for (int fd : fds_)
    if (fd >= 0) ::shutdown(fd, SHUT_RDWR);
  if (wake_[1] >= 0) {
    const char c = 0;
    [[maybe_unused]] const auto n = ::write(wake_[1], &c, 1);
  }
  if (receiver_.joinable()) receiver_.join();
  for (int fd : fds_)
    if (fd >= 0) ::close(fd);
  for (int fd : wake_)
    if (fd >= 0) ::close(fd);
}

// Whatever ends the loop (out of memory included) ends every link, never the process.
void PeerLinks::receive_loop() {
  std::string why = "the links were shut down";
  try {
    receive_until_closed();
  } catch (const std::exception& e) {
    why = fmt::format("the receiver failed: {}", e.what());
  }
  const std::lock_guard<std::mutex> lock(mutex_);
  for (auto& broken : broken_)
    if (broken.empty()) broken = why;
  arrived_.notify_all();
}

void PeerLinks::receive_until_closed() {
  std::vector<pollfd> polled;
  std::vector<int> peers;
  for (int peer = 0; peer < world_; ++peer) {
    if (fds_[static_cast<std::size_t>(peer)] < 0) continue;
    polled.push_back({fds_[static_cast<std::size_t>(peer)], POLLIN, 0});
    peers.push_back(peer);
  }
  polled.push_back({wake_[0], POLLIN, 0});
  std::size_t open = peers.size();
  while (open > 0) {
    if (::poll(polled.data(), polled.size(), -1) < 0) {
      if (errno == EINTR) continue;
      break;
    }
    if (polled.back().revents != 0) break;  // shutting down
    for (std::size_t i = 0; i + 1 < polled.size(); ++i) {
      if (polled[i].fd < 0 || polled[i].revents == 0) continue;
      if (!read_message(peers[i])) {
        polled[i].fd = -1;  // poll ignores it from now on
        --open;
      }
    }
  }
}

// One whole message from `peer` into its queue; false (and the peer marked broken) when
// the connection ended or carried garbage.
bool PeerLinks::read_message(int peer) {
  const int fd = fds_[static_cast<std::size_t>(peer)];
  Header h{};
  std::string why;
  std::vector<char> payload;
  if (!read_all(fd, &h, sizeof h)) {
    why = "closed the connection";
  } else if (h.reserved != 0 || !accept_(h.tag, h.bytes)) {
    why = fmt::format("sent a message nobody expects (tag {:#x}, {} bytes)", h.tag, h.bytes);
  } else {
    payload.resize(static_cast<std::size_t>(h.bytes));
    if (!read_all(fd, payload.data(), payload.size())) why = "closed the connection in a message";
  }
  const std::lock_guard<std::mutex> lock(mutex_);
  if (!why.empty()) {
    broken_[static_cast<std::size_t>(peer)] = fmt::format("rank {} {}", peer, why);
    arrived_.notify_all();
    return false;
  }
  queues_[{peer, h.tag}].push_back(std::move(payload));
  arrived_.notify_all();
  return true;
}

void PeerLinks::send(int peer, std::uint32_t tag, const void* data, std::size_t bytes) {
  const int fd = fds_.at(static_cast<std::size_t>(peer));
  if (fd < 0) throw CollectiveError(fmt::format("{}: no link to rank {}", kWhat, peer));
  Header h{tag, 0, bytes};
  iovec iov[2] = {{&h, sizeof h}, {const_cast<void*>(data), bytes}};
  std::size_t left = sizeof h + bytes;
  int first = 0;
  while (left > 0) {
    msghdr msg{};
    msg.msg_iov = iov + first;
    msg.msg_iovlen = static_cast<std::size_t>(2 - first);
    const ssize_t sent = ::sendmsg(fd, &msg, MSG_NOSIGNAL);
    if (sent < 0) {
      if (errno == EINTR) continue;
      throw CollectiveError(fmt::format("{}: sending to rank {}: {}", kWhat, peer,
                                        errno == EAGAIN ? std::string("no progress within the timeout")
                                                        : std::string(std::strerror(errno))));
    }
    left -= static_cast<std::size_t>(sent);
    auto done = static_cast<std::size_t>(sent);
    while (first < 2 && done >= iov[first].iov_len) done -= iov[first++].iov_len;
    if (first < 2) {
      iov[first].iov_base = static_cast<char*>(iov[first].iov_base) + done;
      iov[first].iov_len -= done;
    }
  }
}

void PeerLinks::recv(int peer, std::uint32_t tag, void* data, std::size_t bytes) {
  std::unique_lock<std::mutex> lock(mutex_);
  auto& queue = queues_[{peer, tag}];
  const bool arrived = arrived_.wait_for(
      lock, timeout_, [&] { return !queue.empty() || !broken_.at(static_cast<std::size_t>(peer)).empty(); });
  if (queue.empty()) {
    if (!arrived) throw CollectiveError(fmt::format("{}: nothing from rank {} within {} ms", kWhat, peer, timeout_.count()));
    throw CollectiveError(fmt::format("{}: {}", kWhat, broken_[static_cast<std::size_t>(peer)]));
  }
  std::vector<char> payload = std::move(queue.front());
  queue.pop_front();
  lock.unlock();
  if (payload.size() != bytes)
    throw CollectiveError(fmt::format("{}: rank {} sent {} bytes where {} were expected", kWhat, peer, payload.size(), bytes));
  if (bytes > 0) std::memcpy(data, payload.data(), bytes);
}

}  // namespace chaosbench::bench::train
