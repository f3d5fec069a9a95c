// What a probe reaches the run through: its samples, and each node's network namespace
// and address. The probe engine fills it from the run (SampleStore, NodeSite); tests fill
// it by hand. Every member may be left empty where a probe kind does not need it.
#pragma once

#include <functional>
#include <string>

#include "harness/collect/sample_store.h"

namespace chaosbench::harness::probes {

struct ProbeContext {
  const SampleStore* store = nullptr;            // the run's samples (metric probes)
  std::function<int(int node)> netns_fd;          // -1: this process's network
  std::function<std::string(int node)> address;   // for {node.N.addr}
};

}  // namespace chaosbench::harness::probes
