#include "bench/train/recovery_mode.h"

namespace chaosbench::bench::train {

const char* to_string(RecoveryMode m) {
  switch (m) {
    case RecoveryMode::kRestart: return "restart";
    case RecoveryMode::kElastic: return "elastic";
    case RecoveryMode::kNone: break;
  }
  return "none";
}

std::optional<RecoveryMode> parse_recovery_mode(std::string_view text) {
  if (text == "none") return RecoveryMode::kNone;
  if (text == "restart") return RecoveryMode::kRestart;
  if (text == "elastic") return RecoveryMode::kElastic;
  return std::nullopt;
}

}  // namespace chaosbench::bench::train
