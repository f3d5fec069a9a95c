#include "harness/plan/schedule_text.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "harness/plan/fault_schedule.h"

namespace chaosbench::harness {
namespace {

// Plays the schedule out: applies and reverts at each deadline until nothing is due.
// Bounded (every step applies or reverts something, each at most once).
void play(FaultSchedule& s) {
  double t = 0;
  for (std::size_t steps = 0; steps <= 2 * s.occurrences().size(); ++steps) {
    auto next = s.next_deadline();
    if (!next) return;
    t = std::max(t, *next);
    for (const auto& a : s.due(t, -1)) {
      if (a.kind == ScheduledAction::kRevert) s.mark_reverted(a.occurrence, t);
      else s.mark_applied(a.occurrence, t);
    }
  }
}

std::string trigger_text(const FaultSpec& f, const PlannedOccurrence& o, const std::vector<PlannedOccurrence>& plan,
                         const std::vector<FaultSpec>& faults) {
  if (o.arrival_s) return fmt::format("arrival {:.3f}s", *o.arrival_s);
  if (o.after) {
    const auto& p = plan[*o.after];
    return fmt::format("{:.3f}s after {}#{}", o.delay_s, faults[p.fault].name, p.number);
  }
  if (o.due_step) return fmt::format("at step {}", *o.due_step);
  if (o.due_s) return fmt::format("at {:.3f}s", *o.due_s);
  return f.type;
}

}  // namespace

std::vector<std::string> describe_schedule(const std::vector<FaultSpec>& faults,
                                           const std::vector<PlannedOccurrence>& plan, double horizon_s) {
  FaultSchedule s(faults, plan);
  play(s);
  std::vector<std::string> lines;
  std::size_t fired = 0;
  for (const auto& o : plan) {
    const auto& f = faults[o.fault];
    std::string line = fmt::format("fault {} ({}) #{} {}", f.name, f.type, o.number, trigger_text(f, o, plan, faults));
    if (!o.nodes.empty()) line += fmt::format(" on nodes [{}]", fmt::join(o.nodes, ","));
    if (!o.fires) {
      const bool parent_fires = !o.after || plan[*o.after].fires;
      line += parent_fires ? fmt::format(": not fired (probability {:g})", f.probability.value_or(1))
                           : std::string(": not fired (the occurrence it follows does not fire)");
      lines.push_back(std::move(line));
      continue;
    }
    const auto& played = s.occurrences()[fired++];
    if (played.applied_s && *played.applied_s > horizon_s) {
      line += fmt::format(": never (it would wait until {:.3f}s, past the timeout)", *played.applied_s);
    } else if (played.applied_s) {
      line += fmt::format(": applied {:.3f}s", *played.applied_s);
      const auto trigger = s.trigger_time(fired - 1);
      if (trigger && *played.applied_s > *trigger + 1e-9) line += " (waited for an occurrence in effect to end)";
      line += played.reverted_s ? fmt::format(", reverted {:.3f}s", *played.reverted_s) : std::string(", until the end");
    } else {
      line += o.due_step || o.after ? ": when its trigger comes" : ": never (waits for a fault that never ends)";
    }
    lines.push_back(std::move(line));
  }
  return lines;
}

}  // namespace chaosbench::harness
