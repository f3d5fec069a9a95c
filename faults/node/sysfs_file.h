// Reading and writing one small kernel file (a cgroup setting). Faults build on these so
// every failure names the file and the errno text.
#pragma once

#include <string>

namespace chaosbench::faults {

// The file's content without trailing whitespace. Throws FaultError.
std::string read_setting(const std::string& path);
// Writes `value` in one write(2). Throws FaultError.
void write_setting(const std::string& path, const std::string& value);

}  // namespace chaosbench::faults
