#include "bench/rendezvous/tcp_store_client.h"

#include <cerrno>
#include <cstring>
#include <stdexcept>
#include <thread>

#include <fmt/format.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <unistd.h>

namespace chaosbench::bench {
namespace {

namespace wire = common::store_wire;
using wire::Message;
using wire::Op;
using wire::Status;
using Clock = std::chrono::steady_clock;

Message request(Op op, std::vector<std::string> fields) { return Message{static_cast<std::uint8_t>(op), std::move(fields)}; }

// One attempt at every address of host:port; -1 with `why` set when none answered.
int try_connect(const std::string& host, int port, std::string* why) {
  addrinfo hints{};
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* found = nullptr;
  if (int rc = ::getaddrinfo(host.c_str(), std::to_string(port).c_str(), &hints, &found); rc != 0) {
    *why = ::gai_strerror(rc);
    return -1;
  }
  int fd = -1;
  for (addrinfo* a = found; a && fd < 0; a = a->ai_next) {
    fd = ::socket(a->ai_family, a->ai_socktype | SOCK_CLOEXEC, a->ai_protocol);
    if (fd >= 0 && ::connect(fd, a->ai_addr, a->ai_addrlen) != 0) {
      *why = std::strerror(errno);
      ::close(fd);
      fd = -1;
    }
  }
  ::freeaddrinfo(found);
  return fd;
}

}  // namespace

TcpStoreClient::TcpStoreClient(const std::string& host, int port, const std::string& token,
                               std::chrono::milliseconds connect_timeout)
    : where_(fmt::format("{}:{}", host, port)) {
  const auto deadline = Clock::now() + connect_timeout;
  std::string why;
  while ((fd_ = try_connect(host, port, &why)) < 0 && Clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  if (fd_ < 0) throw std::runtime_error(fmt::format("rendezvous store {}: cannot connect: {}", where_, why));
  const int one = 1;
  ::setsockopt(fd_, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  Message answer;
  try {
    answer = call(request(Op::kHello, {token}));
  } catch (...) {
    ::close(fd_);
    throw;
  }
  if (answer.code != static_cast<std::uint8_t>(Status::kOk)) {
    ::close(fd_);
    throw std::runtime_error(fmt::format("rendezvous store {}: the token was refused", where_));
  }
}

TcpStoreClient::~TcpStoreClient() { ::close(fd_); }

Message TcpStoreClient::call(const Message& r) {
  std::lock_guard lock(mutex_);
  std::string body;
  if (!wire::write_all(fd_, wire::encode(r)) || !wire::read_frame(fd_, &body))
    throw std::runtime_error(fmt::format("rendezvous store {}: the connection broke", where_));
  auto answer = wire::decode(body);
  if (!answer) throw std::runtime_error(fmt::format("rendezvous store {}: a malformed reply", where_));
  if (answer->code == static_cast<std::uint8_t>(Status::kError))
    throw std::runtime_error(fmt::format("rendezvous store {}: {}", where_,
                                         answer->fields.empty() ? std::string("refused") : answer->fields[0]));
  return *answer;
}

void TcpStoreClient::set(const std::string& key, const std::string& value) { call(request(Op::kSet, {key, value})); }

std::optional<std::string> TcpStoreClient::get(const std::string& key, std::chrono::milliseconds timeout) {
  auto answer = call(request(Op::kGet, {key, std::to_string(timeout.count())}));
  if (answer.code != static_cast<std::uint8_t>(Status::kOk) || answer.fields.size() != 1) return std::nullopt;
  return answer.fields[0];
}

bool TcpStoreClient::wait(const std::vector<std::string>& keys, std::chrono::milliseconds timeout) {
  std::vector<std::string> fields{std::to_string(timeout.count())};
  fields.insert(fields.end(), keys.begin(), keys.end());
  return call(request(Op::kWait, std::move(fields))).code == static_cast<std::uint8_t>(Status::kOk);
}

std::string TcpStoreClient::add_once(const std::string& key, const std::string& value) {
  auto answer = call(request(Op::kAddOnce, {key, value}));
  if (answer.fields.size() != 1) throw std::runtime_error(fmt::format("rendezvous store {}: a malformed reply", where_));
  return answer.fields[0];
}

void TcpStoreClient::remove(const std::string& key) { call(request(Op::kRemove, {key})); }

std::map<std::string, std::string> TcpStoreClient::list(const std::string& prefix) {
  auto answer = call(request(Op::kList, {prefix}));
  std::map<std::string, std::string> out;
  for (std::size_t i = 0; i + 1 < answer.fields.size(); i += 2) out[answer.fields[i]] = answer.fields[i + 1];
  return out;
}

}  // namespace chaosbench::bench
