// Reading the journals of other runs for `chaosbench cleanup`: who owned each one, whether
// that harness still runs, and what it left pending.
#pragma once

#include <cstdint>
#include <string>
#include <sys/types.h>
#include <vector>

#include "harness/journal/journal.h"

namespace chaosbench::harness {

struct JournalFile {
  std::string path;
  std::string run_id;
  std::string out;
  pid_t pid = 0;
  std::uint64_t start_time = 0;
  bool owner_alive = false;           // the harness that wrote it still runs
  std::vector<JournalEntry> pending;  // recorded, not done, oldest first
  std::string error;                  // unreadable: why
};

JournalFile read_journal(const std::string& path);

// Every *.journal file in `directory`, oldest first by name order.
std::vector<JournalFile> scan_journals(const std::string& directory);

}  // namespace chaosbench::harness
