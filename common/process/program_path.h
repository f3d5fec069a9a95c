// execvp's PATH search, done before fork where stat() and allocation are allowed, so the
// child between fork and exec needs only execve (async-signal-safe; execvp is not).
#pragma once

#include <string>

namespace chaosbench::common {

// The path execve should be given for `name` under the PATH `path_var` the child will
// have. A name with a '/' is returned as it is (execve reports what is wrong with it).
// Relative PATH entries resolve against `cwd` (the child's directory; "" for ours).
// Returns "" with `err` set (ENOENT, or EACCES when only non-executables were found).
std::string resolve_program(const std::string& name, const std::string& path_var, const std::string& cwd, int& err);

// This process's own binary (/proc/self/exe), or "chaosbench" when it cannot be read: what
// the harness starts its workers and agents with.
std::string self_exe();

}  // namespace chaosbench::common
