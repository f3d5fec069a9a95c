// TEMPORARY STUB (the probes branch brings the real header): the evaluator interface.
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "harness/runner/sample_store.h"
#include "harness/scenario/probe_spec.h"

namespace chaosbench::harness {

struct ProbeOutcome {
  bool ok = false;
  std::optional<double> value;
  std::string evidence;
};
struct ProbeContext {
  const SampleStore* store = nullptr;
  std::function<int(int node)> netns_fd;
  std::function<std::string(int node)> address;
};
class ProbeCheck {
 public:
  virtual ~ProbeCheck() = default;
  virtual ProbeOutcome evaluate(double now_wall) = 0;
};
std::unique_ptr<ProbeCheck> make_probe_check(const ProbeSpec& spec, const ProbeContext& ctx);

}  // namespace chaosbench::harness
