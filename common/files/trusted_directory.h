// Directories a root process may write into without being redirected by someone else:
// the run's output directory and the directories made inside it.
#pragma once

#include <string>
#include <sys/types.h>

namespace chaosbench::common {

// Trusted owners: root, this process's user, the user who ran sudo (SUDO_UID), and the
// uids listed in $CHAOSBENCH_TRUSTED_UIDS (comma-separated: a CI runner's workspace user).
inline constexpr const char* kTrustedUidsEnv = "CHAOSBENCH_TRUSTED_UIDS";

// Makes `path` such a directory and returns "", or says why it cannot be one.
// - A missing `path` is created with exactly `mode` (missing parents with 0755); under
//   sudo it is given to SUDO_GID with the set-group-ID bit and no group write, so the
//   user who ran sudo can read what root writes there.
// - An existing one is accepted only if it is a directory, not a link, of a trusted
//   owner, that neither group nor others may write.
// - Every directory on the way to it, as written and where links lead, must be of a
//   trusted owner and writable by nobody else unless sticky (like /tmp): otherwise its
//   owner could swap the directory for a link mid-run. With that, paths into it stay
//   where they were checked, and writes need no directory descriptor.
// Blocking; no side effects beyond the directories it creates.
std::string make_trusted_directory(const std::string& path, mode_t mode = 0750);

// The same checks without creating anything: "" when `path` is trusted.
std::string check_trusted_directory(const std::string& path);

}  // namespace chaosbench::common
