// One run as a history keeps it (history_file.h, docs/history.md): its identity, the
// machine's fingerprint and the metric records the gates compare. A line of
// history.jsonl is this entry written as a results.json that holds only those keys
// (schema_version, tool, run_id, started_at, environment less blas, hosts, backends and
// cluster, metrics), so results.json's reader, hardened against hostile files, reads it
// back and the format needs no second description.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "reports/model/run_model.h"

namespace chaosbench::reports {

struct HistoryEntry {
  std::string run_id;  // never empty; unique within a history
  std::string started_at;
  std::string tool_version;
  Environment environment;  // the fingerprint; environment.git_commit is the run's commit
  std::vector<MetricRecord> records;  // the gated records (gate_selection.h gated()), in the run's order
  std::size_t line = 0;  // 1-based line in its history.jsonl; 0 for an entry not read from one
};

// The entry for a run: its gated records only. The caller checks that run_id is set.
HistoryEntry history_entry_of(const RunResult& run);

// The entry as one line of JSON, without the newline.
std::string history_line(const HistoryEntry& entry);

// Reads one line back. Throws std::runtime_error saying what is wrong (without a file or
// line number: the caller adds them) when it is not JSON, not a results object, from a
// newer chaosbench, or has no run_id. Records that are not gated are dropped.
HistoryEntry parse_history_line(const std::string& line);

}  // namespace chaosbench::reports
