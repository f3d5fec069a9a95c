#include "common/process/program_path.h"

#include <filesystem>

#include <cerrno>
#include <sys/stat.h>
#include <unistd.h>

namespace chaosbench::common {

std::string resolve_program(const std::string& name, const std::string& path_var, const std::string& cwd, int& err) {
  if (name.find('/') != std::string::npos) return name;
  err = ENOENT;
  if (name.empty()) return {};
  std::size_t begin = 0;
  while (begin <= path_var.size()) {
    std::size_t end = path_var.find(':', begin);
    if (end == std::string::npos) end = path_var.size();
    std::string dir = path_var.substr(begin, end - begin);
    begin = end + 1;
    std::string candidate = (dir.empty() ? "." : dir) + "/" + name;
    std::string probe = candidate[0] != '/' && !cwd.empty() ? cwd + "/" + candidate : candidate;
    struct stat st {};
    if (::stat(probe.c_str(), &st) != 0) continue;
    if (S_ISREG(st.st_mode) && ::access(probe.c_str(), X_OK) == 0) return candidate;
    err = EACCES;  // as execvp: report "permission denied" if only that was found
  }
  return {};
}

std::string self_exe() {
  std::error_code ec;
  auto p = std::filesystem::read_symlink("/proc/self/exe", ec);
  return ec ? std::string("chaosbench") : p.string();
}

}  // namespace chaosbench::common
