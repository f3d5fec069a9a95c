// The run-time layout (install_layout.h).
#include "common/files/install_layout.h"

#include <filesystem>
#include <system_error>

namespace chaosbench::common {

std::string self_executable() {
  std::error_code ec;
  auto p = std::filesystem::read_symlink("/proc/self/exe", ec);
  return ec ? std::string() : p.string();
}

std::string library_beside(const std::string& exe, std::string_view name) {
  return (std::filesystem::path(exe).parent_path().parent_path() / "lib" / name).lexically_normal().string();
}

}  // namespace chaosbench::common
