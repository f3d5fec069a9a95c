// The few file operations checkpoints need, as plain functions that report errors as text
// (the writer turns them into SaveResult.error, the loader into rejection reasons) and
// never throw. Shared by CheckpointWriter, the manifest and the loader.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace chaosbench::bench::train {

// Reads the whole regular file into `out`. Returns 0 or the errno (ENOENT: missing;
// EINVAL: not a regular file, such as a FIFO, which is never opened for reading).
// EFBIG: larger than `max_bytes`, and not read.
int read_whole_file(const std::string& path, std::string* out, std::uint64_t max_bytes = UINT64_MAX);

// common::write_file_atomically(dir/name): a crash leaves the old file or the new one,
// never a mix. Returns "" or what failed, e.g. "cannot write
// /ckpt/.ckpt-000000100.full.3f9a…tmp: No space left on device".
std::string write_file_atomically(const std::string& dir, const std::string& name, std::string_view bytes);

}  // namespace chaosbench::bench::train
