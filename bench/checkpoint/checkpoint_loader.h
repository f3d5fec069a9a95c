// Finds and loads the newest good checkpoint from a CheckpointWriter's directory. Each
// candidate, newest first, is verified (file present, size, xxh64 in the manifest and in
// its header, decompresses to the expected size, its base full checkpoint good too, the
// model key matches); the first good one is returned with every rejected candidate and
// why, so the trainer can say "ckpt-000150.delta: checksum mismatch, used step 100".
// With a missing or unreadable manifest, the directory's files are verified by their
// headers alone. Pure reads: never modifies the directory.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "bench/checkpoint/checkpoint_state.h"

namespace chaosbench::bench::train {

struct RejectedCheckpoint {
  std::string file;    // file name, relative to the directory
  std::int64_t step = 0;
  std::string reason;  // "checksum mismatch", "truncated (812 of 9437 bytes)", ...
};

struct LoadResult {
  CheckpointState state;
  std::string file;       // the file it came from (a delta names its own file)
  bool full = true;
  double ms = 0;          // read + verify + decode: ckpt/restore_time
  std::vector<RejectedCheckpoint> rejected;  // newer candidates that were bad
};

// nullopt when the directory holds no good checkpoint for model_key (also when it does
// not exist); `rejected` then lists what was tried (out-parameter, may be null).
// `buffer_elements`, when not 0, is the element count of every buffer the caller's model
// has (its parameter count): a header whose table says otherwise, or lists more than
// kMaxCheckpointBuffers, is rejected before anything is allocated for its payload.
// `max_step`, when set, skips newer checkpoints (not rejected: they are good, just later
// than the step every shard of a hybrid-parallel job holds).
inline constexpr std::size_t kMaxCheckpointBuffers = 8;
std::optional<LoadResult> load_latest_checkpoint(const std::string& dir, const std::string& model_key,
                                                 std::vector<RejectedCheckpoint>* rejected = nullptr,
                                                 std::uint64_t buffer_elements = 0,
                                                 std::optional<std::int64_t> max_step = std::nullopt);

}  // namespace chaosbench::bench::train
