// Writes checkpoints: full ones, and incremental ones (deltas) between them.
//
// On disk, in one directory per job:
//   ckpt-<step>.full    every buffer, byte-plane shuffled, zstd-compressed
//   ckpt-<step>.delta   every buffer XORed with the last full checkpoint's, shuffled and
//                       compressed: elements that did not change are zero words and
//                       cost almost nothing; changed ones cost their changed bits
//   manifest.json       the list of files: step, kind, base step, bytes, xxh64 of the file
// Each file also carries a header with its own xxh64, so a damaged file is recognised
// even against a stale manifest. Files and the manifest are written to a temporary name,
// fsync'd, renamed and the directory fsync'd: a crash leaves the old or the new, never a
// half.
//
// A save at step s first drops manifest entries at step >= s (they belong to a timeline
// that a restart threw away). Old files are deleted once `keep_full` newer full
// checkpoints exist.
//
// Threads: save() and completed() are called from the trainer's thread; with async the
// write runs on the writer's own thread. The destructor waits for the write in flight.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "bench/checkpoint/checkpoint_state.h"

namespace chaosbench::bench::train {

struct CheckpointConfig {
  std::string dir;        // created if missing
  bool incremental = true;
  int full_every = 4;     // with incremental: every K-th checkpoint is full (the first always is)
  bool async = true;      // snapshot in save(), write on the writer thread
  int keep_full = 2;      // full checkpoints (with their deltas) kept on disk
  int zstd_level = 1;
};

struct SaveResult {
  std::int64_t step = 0;
  bool full = true;
  std::uint64_t bytes = 0;    // the file's size on disk
  std::uint64_t raw_bytes = 0;  // the state's size uncompressed
  double write_ms = 0;        // encode + write + fsync + rename, on whichever thread did it
  std::string file;           // absolute path
  std::string error;          // empty when it worked
};

class CheckpointWriter {
 public:
  // Throws std::runtime_error when the directory cannot be created.
  explicit CheckpointWriter(CheckpointConfig config);
  ~CheckpointWriter();
  CheckpointWriter(const CheckpointWriter&) = delete;
  CheckpointWriter& operator=(const CheckpointWriter&) = delete;

  // Takes a checkpoint of `state`. Returns the milliseconds the caller was blocked: the
  // copy of the state, plus waiting for the previous write when it is still running,
  // plus the whole write when not async. This is ckpt/save_time.
  double save(const CheckpointState& state);
  // Writes finished since the last call, in order (errors included).
  std::vector<SaveResult> completed();
  // Blocks until nothing is being written.
  void wait();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace chaosbench::bench::train
