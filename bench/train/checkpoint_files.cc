// POSIX file I/O for checkpoints; see checkpoint_files.h.
#include "bench/train/checkpoint_files.h"

#include "common/safe_files.h"

#include <cerrno>

#include <sys/stat.h>
#include <unistd.h>

namespace chaosbench::bench::train {

int read_whole_file(const std::string& path, std::string* out, std::uint64_t max_bytes) {
  int fd = common::open_regular_file(path);
  if (fd < 0) return -fd;
  struct stat st {};
  if (::fstat(fd, &st) != 0) {
    int err = errno;
    ::close(fd);
    return err;
  }
  if (static_cast<std::uint64_t>(st.st_size) > max_bytes) {
    ::close(fd);
    return EFBIG;  // a sparse or absurd file is never read in, whatever its header says
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
  return common::write_file_atomically(dir + "/" + name, bytes);
}

}  // namespace chaosbench::bench::train
