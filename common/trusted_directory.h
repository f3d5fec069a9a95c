// Directories a root process may write into without being redirected by someone else:
// the run's output directory and the directories made inside it.
#pragma once

#include <string>
#include <sys/types.h>

namespace chaosbench::common {

// Makes `path` such a directory and returns "", or says why it cannot be one.
// - A missing `path` is created with exactly `mode` (missing parents with 0755).
// - An existing one is accepted only if it is a directory, not a link, owned by this
//   process's user, that neither group nor others may write.
// - Every directory above it (after resolving links) must be owned by root, this user or
//   the user who ran sudo (SUDO_UID), and writable by nobody else unless it is sticky
//   (like /tmp): otherwise its owner could swap the directory for a link mid-run.
// Blocking; no side effects beyond the directories it creates.
std::string make_trusted_directory(const std::string& path, mode_t mode = 0750);

// The same checks without creating anything: "" when `path` is trusted.
std::string check_trusted_directory(const std::string& path);

}  // namespace chaosbench::common
