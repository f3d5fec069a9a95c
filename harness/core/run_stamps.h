// A run's id and the UTC time stamps that name its files: what the journal, the run's
// directories, the doctor's cache and the self-benchmarks all stamp with.
#pragma once

#include <string>

namespace chaosbench::harness {

// "2026-11-29T21:00:00Z"
std::string utc_timestamp_iso();

// "20261129T210000Z": for file and directory names.
std::string utc_timestamp_compact();

// A fresh id for a run: 12 hex digits, random; names its journal and runtime directory.
std::string make_run_id();

}  // namespace chaosbench::harness
