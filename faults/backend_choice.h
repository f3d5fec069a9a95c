// How a fault type can be carried out on a host: its backends, most preferred first, each
// with the host capabilities it needs. Each registry row (faults/registry/registry.h) points at
// one, defined beside the type in faults/<domain>/; `chaosbench doctor` reads them to say
// what this host can inject, from its probed capabilities alone.
//
// Contract: capability names are those `chaosbench doctor` probes and prints
// ("cap_net_admin", "sch_netem", "cgroup.freezer", "libcuda", ...); a name it does not
// probe is judged unknown, so that backend is never reported usable.
#pragma once

#include <span>
#include <string_view>

namespace chaosbench::faults {

struct BackendOption {
  std::string_view backend;                 // "netem", "signal", "freezer cgroup", ...
  std::span<const std::string_view> needs;  // capabilities that must be ok; empty: any host
  // An extra backend beside the others (one some workloads use), not a fallback for them:
  // its absence matters even where a preferred backend is usable.
  bool addition = false;
};

struct BackendChoice {
  // The one name the doctor lists every type sharing this choice under
  // ("gpu.*, collective.*"); "": each type is listed under its own name.
  std::string_view family;
  std::span<const BackendOption> options;  // most preferred first
};

}  // namespace chaosbench::faults
