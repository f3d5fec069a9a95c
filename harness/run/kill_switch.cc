// See kill_switch.h.
#include "harness/run/kill_switch.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>

#include <spdlog/spdlog.h>

#include "common/files/safe_files.h"

namespace chaosbench::harness {

KillSwitch::KillSwitch(std::string out_dir, double run_began_wall) : path_(path_in(out_dir)) {
  struct stat st {};
  if (::lstat(path_.c_str(), &st) != 0) return;
  // The run's journal names this directory before the switch exists, so `chaosbench stop`
  // may pull it during set-up: only a file older than the run was left by another one.
  const double mtime = static_cast<double>(st.st_mtim.tv_sec) + static_cast<double>(st.st_mtim.tv_nsec) * 1e-9;
  if (mtime >= run_began_wall) return;
  spdlog::warn("removing {}, left by an earlier run in this output directory", path_);
  reset();
}

std::string KillSwitch::path_in(const std::string& out_dir) { return out_dir + "/stop"; }

bool KillSwitch::pulled() const {
  struct stat st {};
  return ::lstat(path_.c_str(), &st) == 0;
}

std::string KillSwitch::reason() const {
  // Anyone who can write the directory may have made it: never follow a link, never
  // open a FIFO or a device (either could block the run's thread), read a bounded head.
  std::string line;
  const int fd = common::open_regular_file(path_, /*no_follow=*/true);
  if (fd >= 0) {
    char buf[512];
    ssize_t n = 0;
    do n = ::read(fd, buf, sizeof(buf));
    while (n < 0 && errno == EINTR);
    ::close(fd);
    for (ssize_t i = 0; i < n && buf[i] != '\n' && line.size() < 200; ++i)
      if (static_cast<unsigned char>(buf[i]) >= 0x20 && buf[i] != 0x7f) line += buf[i];
  }
  return line.empty() ? "the stop file " + path_ : line;
}

void KillSwitch::reset() const { ::unlink(path_.c_str()); }

}  // namespace chaosbench::harness
