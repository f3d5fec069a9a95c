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
    // Rolled back: the error goes on as it was (a HostError from the journal stays one).
    if (why.empty()) throw;
    throw FaultError(failed + "; rolling back: " + why);
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
