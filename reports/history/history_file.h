// One history.jsonl (a testbed × scenario of a history store, history_store.h), open and
// locked: read under a shared flock, appended under an exclusive one, so concurrent CI
// jobs adding to the same history wait for each other instead of interleaving, and a
// reader never sees half an add. docs/history.md describes the file.
//
// Contracts:
// - Every line is one HistoryEntry (history_entry.h); blank lines are skipped. A line that
//   is not an entry, or repeats an earlier run_id, is an error naming FILE:LINE (the file
//   is never rewritten to hide it).
// - An add writes all its lines with one write and fsyncs them. A crash in the middle
//   leaves a last line without its newline that does not parse: readers skip it with a
//   note, and the next add cuts it off (with the same note) before appending.
// - The file is opened without following a link at its last component and must be a
//   regular file of at most kMaxHistoryBytes.
// Errors are std::runtime_error with a message that names the file.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <sys/types.h>
#include <vector>

#include "common/files/unique_fd.h"
#include "reports/history/history_entry.h"

namespace chaosbench::reports {

inline constexpr std::size_t kMaxHistoryBytes = std::size_t{256} << 20;

class HistoryFile {
 public:
  // Under a shared lock for as long as the object lives; nullopt when the file does not exist.
  static std::optional<HistoryFile> open_for_reading(const std::string& path);
  // Creates the missing directories and the file, and holds an exclusive lock.
  static HistoryFile open_for_append(const std::string& path);

  const std::string& path() const { return path_; }
  const std::vector<HistoryEntry>& entries() const { return entries_; }
  // What was passed over (an incomplete last line), one line each, naming FILE:LINE.
  const std::vector<std::string>& notes() const { return notes_; }
  // The entry with this run_id, or nullptr.
  const HistoryEntry* find(const std::string& run_id) const;

  // Appends the entries (only on a file opened for append), in order; throws, having cut
  // the file back to what it was, when the write fails or a run_id is already present.
  void append(const std::vector<HistoryEntry>& entries);

 private:
  HistoryFile(std::string path, common::UniqueFd fd) : path_(std::move(path)), fd_(std::move(fd)) {}
  void load(bool repair);

  std::string path_;
  common::UniqueFd fd_;
  bool writable_ = false;
  std::vector<HistoryEntry> entries_;
  std::vector<std::string> notes_;
  off_t end_ = 0;               // bytes through the last complete entry
  std::size_t lines_ = 0;       // lines through end_
  bool needs_newline_ = false;  // the last entry parsed but lacks its newline
};

}  // namespace chaosbench::reports
