// The rtnetlink requests the tc shaper sends for a plan, as the bytes the kernel receives
// (struct nlmsghdr onwards). For tests that check a message where this kernel cannot
// answer it -- netem's, on a kernel without sch_netem -- against the kernel's own layout.
#pragma once

#include <cstdint>
#include <vector>

#include "faults/network/tc_plan.h"

namespace chaosbench::faults {

enum class TcRequest { kRoot, kClass, kNetem, kFilter };

// The RTM_NEWQDISC / RTM_NEWTCLASS / RTM_NEWTFILTER message add() sends for `which` part
// of `plan` on interface `ifindex`. Throws std::runtime_error when libnl cannot build it.
std::vector<std::uint8_t> tc_add_request_bytes(const RulePlan& plan, int ifindex, TcRequest which);

}  // namespace chaosbench::faults
