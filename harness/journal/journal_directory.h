// Where journals live, and whether a directory may hold them. Root's journals decide
// what root deletes and kills, so their directory must be one nobody else could have
// made or can write: a directory another user created first (/tmp/chaosbench-journal-
// <uid> is predictable) could hold journals they wrote, or be swapped for a link.
#pragma once

#include <string>
#include <sys/types.h>

namespace chaosbench::harness {

// CHAOSBENCH_JOURNAL_DIR (`env_dir`) when set; else /run/chaosbench for root; else
// $XDG_RUNTIME_DIR/chaosbench when XDG_RUNTIME_DIR (`xdg`) is a directory owned by
// `euid` with mode 0700 (systemd's per-user runtime directory); else
// /tmp/chaosbench-journal-<euid>. Only inspects `xdg` (lstat).
std::string choose_journal_directory(uid_t euid, const char* env_dir, const char* xdg);

// For a harness about to write a journal: creates `dir` (0700) when missing; accepts it
// only when it is a directory, not a link, owned by this user, with no permission for
// group or others. Returns "" or a message naming the directory and what to do.
std::string prepare_journal_directory(const std::string& dir);

}  // namespace chaosbench::harness
