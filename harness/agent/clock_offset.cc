#include "harness/agent/clock_offset.h"

#include <algorithm>
#include <cmath>

namespace chaosbench::harness {

ClockOffsetEstimator::ClockOffsetEstimator(std::size_t window) : window_(std::max<std::size_t>(window, 1)) {}

bool ClockOffsetEstimator::add(const ClockExchange& e) {
  for (double t : {e.sent, e.agent_received, e.agent_sent, e.received})
    if (!std::isfinite(t)) return false;
  const double held = e.agent_sent - e.agent_received;  // the agent's own time with it
  const double rtt = (e.received - e.sent) - held;
  if (held < 0 || rtt < 0) return false;
  samples_.push_back({((e.agent_received - e.sent) + (e.agent_sent - e.received)) / 2, rtt});
  if (samples_.size() > window_) samples_.pop_front();
  return true;
}

std::optional<ClockEstimate> ClockOffsetEstimator::estimate() const {
  if (samples_.empty()) return std::nullopt;
  const auto best = std::min_element(samples_.begin(), samples_.end(),
                                     [](const Sample& a, const Sample& b) { return a.rtt < b.rtt; });
  return ClockEstimate{best->offset, best->rtt / 2, best->rtt, samples_.size()};
}

double ClockOffsetEstimator::to_controller(double agent_time) const {
  const auto e = estimate();
  return e ? agent_time - e->offset_s : agent_time;
}

}  // namespace chaosbench::harness
