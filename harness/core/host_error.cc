#include "harness/core/host_error.h"

#include "common/files/safe_files.h"

namespace chaosbench::harness {

void write_file_atomically(const std::string& path, const std::string& content) {
  if (std::string error = common::write_file_atomically(path, content, 0644); !error.empty()) throw HostError(error);
}

}  // namespace chaosbench::harness
