#include "faults/fault.h"

namespace chaosbench::faults {

void Fault::apply(const ResolvedTarget& target, UndoLog& log) {
  if (applied_) throw std::logic_error("fault applied twice without revert");
  log_ = &log;
  do_apply(target);
  applied_ = true;
}

void Fault::revert() {
  if (!applied_) return;
  do_revert();
  applied_ = false;
}

}  // namespace chaosbench::faults
