// TEMPORARY STUB until the probes branch lands: metric probes only (mean/max), by copy.
#include <fmt/format.h>

#include "harness/probes/probe_check.h"

namespace chaosbench::harness {
namespace {
class StubMetric final : public ProbeCheck {
 public:
  StubMetric(const ProbeSpec& s, const SampleStore* st) : spec_(s), store_(st) {}
  ProbeOutcome evaluate(double now) override {
    double sum = 0, mx = -1e300;
    int n = 0;
    for (const auto& s : store_->samples()) {
      double t = s.sample.time > 0 ? s.sample.time : s.received_at;
      if (s.sample.name != spec_.metric || t < now - spec_.window.seconds()) continue;
      sum += s.sample.value;
      mx = std::max(mx, s.sample.value);
      ++n;
    }
    if (n == 0) return {false, std::nullopt, "no samples of " + spec_.metric};
    double v = spec_.stat == "max" ? mx : sum / n;
    bool ok = (!spec_.min || v >= *spec_.min) && (!spec_.max || v <= *spec_.max);
    return {ok, v, fmt::format("{} {} {:.3g} over {}s", spec_.metric, spec_.stat, v, spec_.window.seconds())};
  }
 private:
  const ProbeSpec& spec_;
  const SampleStore* store_;
};
}  // namespace
std::unique_ptr<ProbeCheck> make_probe_check(const ProbeSpec& spec, const ProbeContext& ctx) {
  return std::make_unique<StubMetric>(spec, ctx.store);
}
}  // namespace chaosbench::harness
