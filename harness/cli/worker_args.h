// What the worker roles (cmd_worker*.cc) read the same way: integers from the
// environment the runner sets, and comma-separated lists on their command lines.
#pragma once

#include <string>
#include <vector>

namespace chaosbench::harness {

// The variable as an integer; `fallback` when it is unset or empty.
int env_int(const char* name, int fallback);
// "a,b,,c" -> {"a", "b", "c"}: empty items are skipped.
std::vector<std::string> split_list(const std::string& s);
// "256,1024,16" -> {256, 1024, 16}. Throws UsageError naming --option for anything
// that is not a whole integer.
std::vector<int> int_list(const std::string& s, const char* option);

}  // namespace chaosbench::harness
