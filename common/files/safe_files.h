// Writing files as root into directories a user named. Nothing here follows a link at the
// last component of a path it creates, and nothing depends on the umask: a planted
// symlink is replaced or refused, never written through.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <sys/types.h>

namespace chaosbench::common {

// Writes `bytes` to `path` so that a reader sees the old file or the new one, never part
// of one: a temporary with an unpredictable name beside it (O_CREAT|O_EXCL|O_NOFOLLOW,
// exactly `mode`), fsync, rename over `path` (which replaces a link there instead of
// writing through it), fsync of the directory. Returns "" or what failed, naming the
// path; the temporary is removed on failure. Blocking; safe from any thread.
std::string write_file_atomically(const std::string& path, std::string_view bytes, mode_t mode = 0640);

// Like write_file_atomically, but only if nothing is at `path` yet (link(2) instead of
// rename), so of several writers exactly one wins. Returns "" when this call created it,
// "EEXIST" when something was there already, else what failed.
std::string write_file_once(const std::string& path, std::string_view bytes, mode_t mode = 0640);

// Creates `path` as a new, empty regular file open for writing (a log): an entry already
// there that is not a directory is removed first. Returns the descriptor (O_CLOEXEC) or
// -errno. Async-signal-safe, so a child may call it between fork and exec.
int create_file_fresh(const char* path, mode_t mode = 0640);

// Opens an existing regular file for reading: O_NOFOLLOW at the last component when
// `no_follow`, and O_NONBLOCK so that a FIFO swapped in after the check cannot block;
// anything but a regular file is refused with -EINVAL before it is opened (and checked
// again after). Returns the descriptor or -errno.
int open_regular_file(const std::string& path, bool no_follow = false);

// Reads the whole file open at `fd` (a regular one) into `out`: as many bytes as fstat
// says, fewer if it shrank meanwhile. Returns 0, EFBIG when it is larger than `max_bytes`
// (nothing is read), or the errno. Leaves `fd` open.
int read_open_file(int fd, std::string& out, std::uint64_t max_bytes);

// open_regular_file, then read_open_file. Returns 0 or the errno: ENOENT (missing),
// EINVAL (not a regular file, never opened), EFBIG (larger than `max_bytes`), ...
int read_regular(const std::string& path, std::string& out, std::uint64_t max_bytes, bool no_follow = false);

// read_regular with the reason as a message naming the path ("" when it worked); never
// blocks on anything but the disk.
std::string read_regular_file(const std::string& path, std::string& out, std::size_t max_bytes);

// The same for a file a user named on the command line, which may also be a pipe
// (`<(...)`, /dev/stdin): that one is read until its writer closes it, and refused past
// `max_bytes`. A device or socket is still refused.
std::string read_named_file(const std::string& path, std::string& out, std::size_t max_bytes);

// A random hex string of `chars` digits from getrandom(2), for names others must not guess.
std::string random_hex(std::size_t chars);

}  // namespace chaosbench::common
