#include "bench/llm/load/slo.h"

namespace chaosbench::bench::llm {
namespace {

bool within(const std::optional<common::Duration>& bound, StreamTiming::Nanos value) {
  return !bound || value <= bound->value;
}

}  // namespace

SloCheck check_slo(const Slo& slo, const StreamTiming& timing) {
  SloCheck c;
  c.completed = timing.ok();
  c.ttft = !slo.ttft || (timing.ttft && within(slo.ttft, *timing.ttft));
  c.tpot = within(slo.tpot, timing.tpot.value_or(StreamTiming::Nanos{0}));
  c.e2e = within(slo.e2e, timing.e2e);
  return c;
}

}  // namespace chaosbench::bench::llm
