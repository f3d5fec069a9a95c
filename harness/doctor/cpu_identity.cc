#include "harness/doctor/cpu_identity.h"

#include <fstream>
#include <sstream>

namespace chaosbench::harness {

CpuIdentity read_cpuinfo() {
  CpuIdentity c;
  std::ifstream in("/proc/cpuinfo");
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty()) break;
    const auto colon = line.find(':');
    if (colon == std::string::npos) continue;
    std::string key = line.substr(0, colon);
    key.erase(key.find_last_not_of(" \t") + 1);
    std::string value = colon + 2 <= line.size() ? line.substr(colon + 2) : "";
    if (key == "vendor_id") c.vendor = value;
    else if (key == "cpu family") c.family = value;
    else if (key == "model") c.model = value;
    else if (key == "stepping") c.stepping = value;
    else if (key == "model name") c.name = value;
    else if (key == "flags") c.flags_line = value;
  }
  std::istringstream words(c.flags_line);
  for (std::string f; words >> f;) c.flags.insert(f);
  return c;
}

}  // namespace chaosbench::harness
