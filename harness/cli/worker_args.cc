#include "harness/cli/worker_args.h"

#include <cstdlib>
#include <sstream>

#include "harness/cli/cli_options.h"

namespace chaosbench::harness {

int env_int(const char* name, int fallback) {
  const char* v = std::getenv(name);
  return v && *v ? std::atoi(v) : fallback;
}

std::vector<std::string> split_list(const std::string& s) {
  std::vector<std::string> out;
  std::stringstream in(s);
  std::string item;
  while (std::getline(in, item, ','))
    if (!item.empty()) out.push_back(item);
  return out;
}

std::vector<int> int_list(const std::string& s, const char* option) {
  std::vector<int> out;
  for (const auto& item : split_list(s)) {
    std::size_t used = 0;
    try {
      out.push_back(std::stoi(item, &used));
    } catch (const std::exception&) {
      used = 0;
    }
    if (used != item.size())
      throw UsageError(std::string("--") + option + ": expected comma-separated integers, got \"" + s + "\"");
  }
  return out;
}

}  // namespace chaosbench::harness
