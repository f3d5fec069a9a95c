// Reading and writing one small kernel file (a cgroup setting). Faults and node cgroups build on these so
// every failure names the file and the errno text.
#pragma once

#include <string>

namespace chaosbench::common {

// The file's content without trailing whitespace. Throws std::runtime_error.
std::string read_setting(const std::string& path);
// Writes `value` in one write(2). Throws std::runtime_error.
void write_setting(const std::string& path, const std::string& value);

}  // namespace chaosbench::common
