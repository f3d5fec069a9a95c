#include "http_test_client.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cctype>
#include <cerrno>

namespace chaosbench::test {

int connect_local(unsigned short port, std::chrono::milliseconds timeout) {
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return -1;
  timeval tv{static_cast<time_t>(timeout.count() / 1000), static_cast<suseconds_t>(timeout.count() % 1000 * 1000)};
  ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  ::setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(port);
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) {
    ::close(fd);
    return -1;
  }
  return fd;
}

bool send_all(int fd, const std::string& bytes) {
  std::size_t done = 0;
  while (done < bytes.size()) {
    const auto n = ::send(fd, bytes.data() + done, bytes.size() - done, MSG_NOSIGNAL);
    if (n <= 0) return false;
    done += static_cast<std::size_t>(n);
  }
  return true;
}

namespace {
bool fill(int fd, std::string& buffer) {
  char chunk[65536];
  const auto n = ::recv(fd, chunk, sizeof chunk, 0);
  if (n <= 0) return false;
  buffer.append(chunk, static_cast<std::size_t>(n));
  return true;
}
}  // namespace

HttpReply read_reply(int fd, std::string& pending) {
  HttpReply r;
  std::size_t head_end;
  while ((head_end = pending.find("\r\n\r\n")) == std::string::npos)
    if (!fill(fd, pending)) return r;
  const std::string head = pending.substr(0, head_end);
  if (head.size() < 12 || head.rfind("HTTP/1.", 0) != 0) return r;
  const int status = std::stoi(head.substr(9, 3));
  std::size_t length = 0;
  std::string lower = head;
  for (auto& ch : lower) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
  if (auto p = lower.find("content-length: "); p != std::string::npos) length = std::stoul(lower.substr(p + 16));
  r.closed = lower.find("connection: close") != std::string::npos;
  while (pending.size() < head_end + 4 + length)
    if (!fill(fd, pending)) return r;
  r.status = status;
  r.body = pending.substr(head_end + 4, length);
  pending.erase(0, head_end + 4 + length);
  return r;
}

bool wait_closed(int fd) {
  char chunk[4096];
  for (;;) {
    const auto n = ::recv(fd, chunk, sizeof chunk, 0);
    if (n == 0) return true;
    if (n < 0) return errno == ECONNRESET;
  }
}

std::string request_text(const std::string& method, const std::string& target, const std::string& body) {
  return method + " " + target + " HTTP/1.1\r\nHost: test\r\nContent-Type: application/json\r\nContent-Length: " +
         std::to_string(body.size()) + "\r\n\r\n" + body;
}

HttpReply http_request(unsigned short port, const std::string& method, const std::string& target,
                       const std::string& body) {
  const int fd = connect_local(port);
  if (fd < 0) return {};
  std::string pending;
  HttpReply r;
  if (send_all(fd, request_text(method, target, body))) r = read_reply(fd, pending);
  ::close(fd);
  return r;
}

}  // namespace chaosbench::test
