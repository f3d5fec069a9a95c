#include "faults/fault.h"

namespace chaosbench::faults {

void Fault::apply(const ResolvedTarget& target, UndoLog& log) {
  if (applied_) throw std::logic_error("fault applied twice without revert");
  log_ = &log;
  try {
    do_apply(target);
  } catch (const std::exception& e) {
    const std::string failed = e.what();
    const std::string why = roll_back();
    throw FaultError(why.empty() ? failed : failed + "; rolling back: " + why);
  } catch (...) {
    roll_back();
    throw;
  }
  applied_ = true;
}

void Fault::revert() {
  if (!applied_) return;
  do_revert();
  applied_ = false;
}

std::string Fault::roll_back() noexcept {
  try {
    do_revert();
    return "";
  } catch (const std::exception& e) {
    return e.what();
  } catch (...) {
    return "unknown error";
  }
}

}  // namespace chaosbench::faults
