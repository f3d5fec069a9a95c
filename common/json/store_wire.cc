#include "common/json/store_wire.h"

#include <cerrno>

#include <sys/socket.h>
#include <unistd.h>

namespace chaosbench::common::store_wire {
namespace {

void put_u32(std::string& out, std::size_t v) {
  for (int shift = 24; shift >= 0; shift -= 8) out.push_back(static_cast<char>((v >> shift) & 0xff));
}

std::uint32_t get_u32(std::string_view in) {
  std::uint32_t v = 0;
  for (int i = 0; i < 4; ++i) v = (v << 8) | static_cast<unsigned char>(in[static_cast<std::size_t>(i)]);
  return v;
}

bool read_all(int fd, char* data, std::size_t n) {
  while (n > 0) {
    const ssize_t got = ::read(fd, data, n);
    if (got < 0 && errno == EINTR) continue;
    if (got <= 0) return false;
    data += got;
    n -= static_cast<std::size_t>(got);
  }
  return true;
}

}  // namespace

std::string encode(const Message& m) {
  std::string body(1, static_cast<char>(m.code));
  for (const auto& f : m.fields) {
    put_u32(body, f.size());
    body += f;
  }
  std::string frame;
  frame.reserve(body.size() + 4);
  put_u32(frame, body.size());
  return frame + body;
}

std::optional<Message> decode(std::string_view body) {
  if (body.empty()) return std::nullopt;
  Message m;
  m.code = static_cast<std::uint8_t>(body.front());
  body.remove_prefix(1);
  while (!body.empty()) {
    if (body.size() < 4) return std::nullopt;
    const std::uint32_t len = get_u32(body);
    body.remove_prefix(4);
    if (len > body.size()) return std::nullopt;
    m.fields.emplace_back(body.substr(0, len));
    body.remove_prefix(len);
  }
  return m;
}

bool read_frame(int fd, std::string* body, std::size_t max) {
  char header[4];
  if (!read_all(fd, header, sizeof header)) return false;
  const std::uint32_t len = get_u32(std::string_view(header, sizeof header));
  if (len == 0 || len > max) return false;
  body->resize(len);
  return read_all(fd, body->data(), len);
}

bool write_all(int fd, std::string_view data) {
  while (!data.empty()) {
    const ssize_t n = ::send(fd, data.data(), data.size(), MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    data.remove_prefix(static_cast<std::size_t>(n));
  }
  return true;
}

}  // namespace chaosbench::common::store_wire
