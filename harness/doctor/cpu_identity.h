// This host's CPU as /proc/cpuinfo names it: the first processor block (every core of a
// host is the same model). What the BLAS kernel cache keys on (blas_choice.h) and the
// run's environment fingerprint records (host_fingerprint.h).
#pragma once

#include <set>
#include <string>

namespace chaosbench::harness {

struct CpuIdentity {
  std::string vendor, family, model, stepping, name, flags_line;
  std::set<std::string> flags;
};

// Empty fields when /proc/cpuinfo cannot be read.
CpuIdentity read_cpuinfo();

}  // namespace chaosbench::harness
