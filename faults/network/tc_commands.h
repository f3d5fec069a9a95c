// The tc shaper's changes spelled as iproute2 `tc` command lines (argv, no shell): what a
// script would run for the same kernel change. The shaper itself never runs them; the
// benchmark (`chaosbench bench shaper`) times them against netlink, and logs can show them.
#pragma once

#include <string>
#include <vector>

#include "faults/network/tc_plan.h"

namespace chaosbench::faults {

using Argv = std::vector<std::string>;

// Putting `plan` in effect on `dev`, one command a step:
//   [tc qdisc add dev DEV root handle 1: htb]                        (add_root)
//   tc class add dev DEV parent 1: classid 1:N htb rate R ceil R burst B cburst B quantum Q
//   [tc qdisc add dev DEV parent 1:N handle N: netem limit L delay D J C loss P ...]
//   tc filter add dev DEV parent 1: protocol ip prio P u32 match ip dst A/32 flowid 1:N
std::vector<Argv> tc_add_commands(const RulePlan& plan, const std::string& dev, bool add_root);

// Taking it out: the root with everything under it (remove_root), or else
//   tc filter del dev DEV parent 1: protocol ip prio P
//   tc class del dev DEV classid 1:N                     (its netem goes with it)
std::vector<Argv> tc_remove_commands(const RulePlan& plan, const std::string& dev, bool remove_root);

}  // namespace chaosbench::faults
