// POSIX file I/O for checkpoints; see checkpoint_files.h.
#include "bench/train/checkpoint_files.h"

#include <cerrno>
#include <cstring>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fmt/format.h>

namespace chaosbench::bench::train {
namespace {

std::string failure(const char* what, const std::string& path, int err) {
  return fmt::format("{} {}: {}", what, path, std::strerror(err));
}

}  // namespace

int read_whole_file(const std::string& path, std::string* out) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return errno;
  struct stat st {};
  if (::fstat(fd, &st) != 0) {
    int err = errno;
    ::close(fd);
    return err;
  }
  out->clear();
  out->resize(static_cast<std::size_t>(st.st_size));
  std::size_t done = 0;
  while (done < out->size()) {
    ssize_t n = ::read(fd, out->data() + done, out->size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      int err = errno;
      ::close(fd);
      return err;
    }
    if (n == 0) break;  // shrank while we read: what was read is the file
    done += static_cast<std::size_t>(n);
  }
  out->resize(done);
  ::close(fd);
  return 0;
}

std::string write_file_atomically(const std::string& dir, const std::string& name, std::string_view bytes) {
  const std::string path = dir + "/" + name;
  const std::string tmp = path + ".tmp";
  int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) return failure("create", tmp, errno);
  std::size_t done = 0;
  std::string error;
  while (done < bytes.size() && error.empty()) {
    ssize_t n = ::write(fd, bytes.data() + done, bytes.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) error = failure("write", tmp, n < 0 ? errno : ENOSPC);
    else done += static_cast<std::size_t>(n);
  }
  if (error.empty() && ::fsync(fd) != 0) error = failure("fsync", tmp, errno);
  if (::close(fd) != 0 && error.empty()) error = failure("close", tmp, errno);
  if (error.empty() && ::rename(tmp.c_str(), path.c_str()) != 0) error = failure("rename", tmp, errno);
  if (!error.empty()) {
    ::unlink(tmp.c_str());
    return error;
  }
  // The rename is durable only once the directory entry is.
  int dfd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dfd < 0) return failure("open", dir, errno);
  if (::fsync(dfd) != 0) error = failure("fsync", dir, errno);
  ::close(dfd);
  return error;
}

}  // namespace chaosbench::bench::train
