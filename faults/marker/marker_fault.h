// marker: a fault that changes nothing. It marks a window on the timeline so metrics get a
// phase of their own there: a control window next to real faults, or a test of triggers.
#pragma once

#include <span>

#include "faults/backend_choice.h"
#include "faults/fault.h"
#include "faults/param.h"

namespace chaosbench::faults {

class MarkerFault final : public Fault {
 public:
  static std::span<const ParamSpec> params();
  // "none": any host.
  static const BackendChoice& backends();
  std::string backend() const override { return "none"; }

 private:
  void do_apply(const ResolvedTarget&) override {}
  void do_revert() override {}
};

}  // namespace chaosbench::faults
