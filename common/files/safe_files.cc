#include "common/files/safe_files.h"

#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <fmt/format.h>
#include <stdexcept>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

namespace chaosbench::common {
namespace {

std::string failure(const char* what, const std::string& path, int err) {
  return fmt::format("cannot {} {}: {}", what, path, std::strerror(err));
}

// "", or what failed while writing all of `bytes` to `fd`.
std::string write_all(int fd, std::string_view bytes, const std::string& path) {
  std::size_t done = 0;
  while (done < bytes.size()) {
    ssize_t n = ::write(fd, bytes.data() + done, bytes.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return failure("write", path, n < 0 ? errno : ENOSPC);
    done += static_cast<std::size_t>(n);
  }
  return "";
}

std::string parent_of(const std::string& path) {
  const auto slash = path.find_last_of('/');
  if (slash == std::string::npos) return ".";
  return slash == 0 ? "/" : path.substr(0, slash);
}

}  // namespace

std::string random_hex(std::size_t chars) {
  std::string out;
  unsigned char buf[32];
  while (out.size() < chars) {
    ssize_t n = ::getrandom(buf, sizeof(buf), 0);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) throw std::runtime_error("getrandom failed");
    static constexpr char kHex[] = "0123456789abcdef";
    for (ssize_t i = 0; i < n && out.size() < chars; ++i) {
      out += kHex[buf[i] >> 4];
      if (out.size() < chars) out += kHex[buf[i] & 15];
    }
  }
  return out;
}

namespace {

// Writes a complete, durable temporary beside `path`, named so nobody can predict it.
// Returns "" and its name in `tmp`, or what failed (and then no temporary is left).
std::string write_temporary(const std::string& path, std::string_view bytes, mode_t mode, std::string& tmp) {
  const std::string dir = parent_of(path);
  const std::string base = path.substr(path.find_last_of('/') + 1);
  // Hidden, and unpredictable, so nobody can plant a link under the name in advance.
  tmp = fmt::format("{}/.{}.{}.tmp", dir, base, random_hex(12));
  int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, mode);
  if (fd < 0) return failure("create", tmp, errno);
  std::string error = ::fchmod(fd, mode) == 0 ? write_all(fd, bytes, tmp) : failure("chmod", tmp, errno);
  if (error.empty() && ::fsync(fd) != 0) error = failure("fsync", tmp, errno);
  if (::close(fd) != 0 && error.empty()) error = failure("close", tmp, errno);
  if (!error.empty()) ::unlink(tmp.c_str());
  return error;
}

// A new directory entry is durable only once the directory is.
std::string sync_parent(const std::string& path) {
  const std::string dir = parent_of(path);
  int dfd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dfd < 0) return failure("open", dir, errno);
  std::string error = ::fsync(dfd) == 0 ? "" : failure("fsync", dir, errno);
  ::close(dfd);
  return error;
}

}  // namespace

std::string write_file_atomically(const std::string& path, std::string_view bytes, mode_t mode) {
  std::string tmp;
  if (std::string error = write_temporary(path, bytes, mode, tmp); !error.empty()) return error;
  if (::rename(tmp.c_str(), path.c_str()) != 0) {
    std::string error = failure("rename", tmp, errno);
    ::unlink(tmp.c_str());
    return error;
  }
  return sync_parent(path);
}

std::string write_file_once(const std::string& path, std::string_view bytes, mode_t mode) {
  std::string tmp;
  if (std::string error = write_temporary(path, bytes, mode, tmp); !error.empty()) return error;
  const bool won = ::link(tmp.c_str(), path.c_str()) == 0;
  const int err = errno;
  ::unlink(tmp.c_str());
  if (!won) return err == EEXIST ? "EEXIST" : failure("create", path, err);
  return sync_parent(path);
}

int create_file_fresh(const char* path, mode_t mode) {
  constexpr int kFlags = O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC;
  int fd = ::open(path, kFlags, mode);
  if (fd < 0 && errno == EEXIST && ::unlink(path) == 0) fd = ::open(path, kFlags, mode);
  if (fd < 0) return -errno;
  if (::fchmod(fd, mode) != 0) {
    int err = errno;
    ::close(fd);
    return -err;
  }
  return fd;
}

int open_regular_file(const std::string& path, bool no_follow) {
  // Judged before it is opened: opening a device can act (a tape rewinds, a tty becomes
  // the controlling terminal), so anything but a regular file is never opened at all.
  struct stat before {};
  if ((no_follow ? ::lstat(path.c_str(), &before) : ::stat(path.c_str(), &before)) != 0) return -errno;
  if (!S_ISREG(before.st_mode)) return -EINVAL;
  int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC | (no_follow ? O_NOFOLLOW : 0));
  if (fd < 0) return -errno;
  struct stat st {};
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    ::close(fd);
    return -EINVAL;
  }
  // Regular files ignore O_NONBLOCK for reads; clear it anyway so nothing sees EAGAIN.
  ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) & ~O_NONBLOCK);
  return fd;
}

int read_open_file(int fd, std::string& out, std::uint64_t max_bytes) {
  struct stat st {};
  if (::fstat(fd, &st) != 0) return errno;
  if (static_cast<std::uint64_t>(st.st_size) > max_bytes) return EFBIG;
  out.assign(static_cast<std::size_t>(st.st_size), '\0');
  std::size_t done = 0;
  while (done < out.size()) {
    ssize_t n = ::read(fd, out.data() + done, out.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return errno;
    if (n == 0) break;  // shrank while we read: what was read is the file
    done += static_cast<std::size_t>(n);
  }
  out.resize(done);
  return 0;
}

int read_regular(const std::string& path, std::string& out, std::uint64_t max_bytes, bool no_follow) {
  const int fd = open_regular_file(path, no_follow);
  if (fd < 0) return -fd;
  const int err = read_open_file(fd, out, max_bytes);
  ::close(fd);
  return err;
}

std::string read_regular_file(const std::string& path, std::string& out, std::size_t max_bytes) {
  switch (const int err = read_regular(path, out, max_bytes)) {
    case 0: return "";
    case EINVAL: return fmt::format("{} is not a regular file", path);
    case EFBIG: return fmt::format("{} is larger than {} bytes", path, max_bytes);
    default: return failure("read", path, err);
  }
}

std::string read_named_file(const std::string& path, std::string& out, std::size_t max_bytes) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) return failure("open", path, errno);
  if (!S_ISFIFO(st.st_mode)) return read_regular_file(path, out, max_bytes);
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return failure("open", path, errno);
  out.clear();
  char buf[65536];
  while (true) {
    ssize_t n = ::read(fd, buf, sizeof(buf));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      const int err = errno;
      ::close(fd);
      return n < 0 ? failure("read", path, err) : "";
    }
    if (out.size() + static_cast<std::size_t>(n) > max_bytes) {
      ::close(fd);
      return fmt::format("{} is larger than {} bytes", path, max_bytes);
    }
    out.append(buf, static_cast<std::size_t>(n));
  }
}

}  // namespace chaosbench::common
