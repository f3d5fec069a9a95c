// Where chaosbench finds what it loads at run time (the CUDA interposer it preloads into a
// command workload, the CUDA layer's module): beside its own binary, as
// <the binary's directory>/../lib/NAME. That holds in the build tree (build/bin/,
// build/lib/) and in an installation (PREFIX/bin/, PREFIX/lib/: the install rules in
// CMakeLists.txt) alike, so no path is compiled in and none comes from the environment.
// Plain functions; any thread.
#pragma once

#include <string>
#include <string_view>

namespace chaosbench::common {

// The file the kernel runs for this process (/proc/self/exe), "" when it cannot be read.
std::string self_executable();

// <directory of exe>/../lib/name, lexically normalised ("/usr/bin/chaosbench" and
// "libx.so" give "/usr/lib/libx.so"). Pure: nothing is looked up on disk.
std::string library_beside(const std::string& exe, std::string_view name);

}  // namespace chaosbench::common
