// The few file operations checkpoints need, as plain functions that report errors as text
// (the writer turns them into SaveResult.error, the loader into rejection reasons) and
// never throw. Shared by CheckpointWriter, the manifest and the loader.
#pragma once

#include <string>
#include <string_view>

namespace chaosbench::bench::train {

// Reads the whole file into `out`. Returns 0 or the errno (ENOENT: missing).
int read_whole_file(const std::string& path, std::string* out);

// Writes dir/name so that a crash leaves the old file or the new one, never a mix:
//   open(dir/name.tmp, O_TRUNC) ; write ; fsync ; close ; rename(name.tmp, name) ; fsync(dir)
// Returns "" or what failed, e.g. "write /ckpt/ckpt-000000100.full.tmp: No space left on
// device"; the temporary file is removed on failure.
std::string write_file_atomically(const std::string& dir, const std::string& name, std::string_view bytes);

}  // namespace chaosbench::bench::train
