#include "common/kernel/sysfs_file.h"

#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <fmt/format.h>
#include <unistd.h>

#include <stdexcept>

namespace chaosbench::common {

std::string read_setting(const std::string& path) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) throw std::runtime_error(fmt::format("cannot read {}: {}", path, std::strerror(errno)));
  char buf[256];
  ssize_t n = ::read(fd, buf, sizeof(buf));
  int err = errno;
  ::close(fd);
  if (n < 0) throw std::runtime_error(fmt::format("cannot read {}: {}", path, std::strerror(err)));
  std::string out(buf, static_cast<std::size_t>(n));
  while (!out.empty() && (out.back() == '\n' || out.back() == ' ')) out.pop_back();
  return out;
}

void write_setting(const std::string& path, const std::string& value) {
  int fd = ::open(path.c_str(), O_WRONLY | O_CLOEXEC);
  if (fd < 0) throw std::runtime_error(fmt::format("cannot open {}: {}", path, std::strerror(errno)));
  ssize_t n = ::write(fd, value.data(), value.size());
  int err = errno;
  ::close(fd);
  if (n != static_cast<ssize_t>(value.size()))
    throw std::runtime_error(fmt::format("cannot write \"{}\" to {}: {}", value, path, std::strerror(err)));
}

}  // namespace chaosbench::common
