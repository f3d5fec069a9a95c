// Read-only file helpers for the doctor probes. /proc and /sys files report size 0, so
// they are read to end of file; gzip files (/proc/config.gz) go through a dlopen'ed zlib
// so that the harness needs no link-time zlib dependency for one optional read.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace chaosbench::harness {

// The whole file, or nullopt when it cannot be opened.
std::optional<std::string> read_text_file(const std::string& path);

// The decompressed file, or nullopt when it cannot be read or libz.so.1 is not loadable.
std::optional<std::string> read_gzip_file(const std::string& path);

bool path_exists(const std::string& path);

// Lines without their '\n'; the views point into `text`.
std::vector<std::string_view> split_lines(std::string_view text);

// Leading and trailing blanks (space, tab, \r) removed.
std::string_view trim(std::string_view text);

}  // namespace chaosbench::harness
