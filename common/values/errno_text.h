// An errno value as text ("Connection refused"), one spelling for every message that
// reports a failed system call.
#pragma once

#include <string>
#include <system_error>

namespace chaosbench::common {

inline std::string errno_text(int err) { return std::system_category().message(err); }

}  // namespace chaosbench::common
