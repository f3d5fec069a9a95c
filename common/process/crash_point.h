// Named points in a process's life where a crash test may kill it: with
// CHAOSBENCH_CRASH_AT=POINT[@ROLE] in its environment, the process SIGKILLs itself the
// first time it reaches POINT (only when its role, set_crash_role, is ROLE). Nothing else
// reads the variable; without it a point costs one branch. The points are listed in
// docs/architecture.md (Crash safety); tests/e2e/agent_kill_points_test.cc kills an agent at
// each and checks that `chaosbench cleanup` leaves nothing.
//
// Threads: set_crash_role before the threads that reach points start; crash_point from any.
#pragma once

#include <string>
#include <string_view>

namespace chaosbench::common {

// The name a POINT@ROLE setting must give for this process to stop at POINT ("node1" for
// node 1's agent). A process with no role stops only at settings without "@".
void set_crash_role(std::string role);

// True when crash_point(point) would kill this process: for a point that must do part of
// its work first (a journal line torn halfway).
bool crash_point_armed(std::string_view point);

// SIGKILLs this process when CHAOSBENCH_CRASH_AT names `point` (and its role).
void crash_point(std::string_view point);

}  // namespace chaosbench::common
