#include "faults/fault.h"

namespace chaosbench::faults {

void Fault::apply(const ResolvedTarget& target, UndoLog& log) {
  if (applied_) throw std::logic_error("fault applied twice without revert");
  log_ = &log;
  auto start = std::chrono::steady_clock::now();
  do_apply(target);
  apply_duration_ = std::chrono::steady_clock::now() - start;
  applied_ = true;
}

void Fault::revert() {
  if (!applied_) return;
  do_revert();
  applied_ = false;
}

}  // namespace chaosbench::faults
