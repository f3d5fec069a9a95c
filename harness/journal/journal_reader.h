// Reading the journals of other runs for `chaosbench cleanup`: who owned each one, whether
// that harness still runs, and what it left pending.
//
// Contract: a journal is believed only when it is a regular file (not a link) owned by
// this process's user and writable by nobody else, at most kMaxJournalBytes, and every
// complete line is what Journal writes (an owner line, then "record"/"done" lines with
// the types Journal gives them). Anything else sets `error` (naming the file, the line
// and what was expected) and leaves `pending` empty: a journal that is wrong in one place
// is not trusted in any. Only an unterminated last line is ignored (see journal.h).
// Reading never throws, allocates at most about the file's size and recurses at most
// common::kMaxJsonDepth levels, whatever the bytes.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <sys/types.h>
#include <vector>

#include "harness/journal/journal.h"

namespace chaosbench::harness {

// A run journals a few hundred entries; these bound what a corrupt or hostile file costs.
inline constexpr std::size_t kMaxJournalBytes = 16u << 20;
inline constexpr std::size_t kMaxJournalLine = 64u << 10;

struct JournalFile {
  std::string path;
  std::string run_id;
  std::string out;
  pid_t pid = 0;
  std::uint64_t start_time = 0;
  bool owner_alive = false;           // the harness that wrote it still runs
  bool empty = false;                 // no complete line yet: nothing was journaled
  std::vector<JournalEntry> pending;  // recorded, not done, oldest first
  std::string error;                  // not to be trusted: why
};

JournalFile read_journal(const std::string& path);

// Every *.journal file in `directory`, oldest first by name order.
std::vector<JournalFile> scan_journals(const std::string& directory);

}  // namespace chaosbench::harness
