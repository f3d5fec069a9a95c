// See kill_switch.h.
#include "harness/runner/kill_switch.h"

#include <sys/stat.h>
#include <unistd.h>

#include <fstream>
#include <spdlog/spdlog.h>

namespace chaosbench::harness {

KillSwitch::KillSwitch(std::string out_dir) : path_(path_in(out_dir)) {
  if (pulled()) {
    spdlog::warn("removing {}, left by an earlier run in this output directory", path_);
    reset();
  }
}

std::string KillSwitch::path_in(const std::string& out_dir) { return out_dir + "/stop"; }

bool KillSwitch::pulled() const {
  struct stat st {};
  return ::lstat(path_.c_str(), &st) == 0;
}

std::string KillSwitch::reason() const {
  std::ifstream in(path_);
  std::string line;
  char c = 0;
  // Bounded and printable: the file may come from anyone who can write the directory.
  while (line.size() < 200 && in.get(c) && c != '\n')
    if (c >= 0x20 && c != 0x7f) line += c;
  return line.empty() ? "the stop file " + path_ : line;
}

void KillSwitch::reset() const { ::unlink(path_.c_str()); }

}  // namespace chaosbench::harness
