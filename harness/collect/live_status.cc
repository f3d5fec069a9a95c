// The run's live state (live_status.h).
#include "harness/collect/live_status.h"

#include <algorithm>
#include <fmt/format.h>
#include <fmt/ranges.h>

namespace chaosbench::harness {

std::string_view to_string(RunStage stage) {
  switch (stage) {
    case RunStage::kSetup: return "setup";
    case RunStage::kRunning: return "running";
    case RunStage::kUnwinding: return "unwinding";
    case RunStage::kFinished: return "finished";
  }
  return "setup";
}

std::string target_label(const TargetSpec& target) {
  using faults::TargetForm;
  const std::string form(faults::to_string(target.form));
  switch (target.form) {
    case TargetForm::kAll: return form;
    case TargetForm::kNodes:
    case TargetForm::kRanks: return fmt::format("{}:{}", form, fmt::join(target.indices, ","));
    case TargetForm::kRandom: return fmt::format("{}:{}", form, target.count);
    case TargetForm::kPercent: return fmt::format("{}:{:g}", form, target.percent.value);
    case TargetForm::kLinks: {
      std::vector<std::string> links;
      for (const auto& [a, b] : target.links) links.push_back(fmt::format("{}-{}", a, b));
      return fmt::format("{}:{}", form, fmt::join(links, ","));
    }
    case TargetForm::kGroups: {
      std::vector<std::string> groups;
      for (const auto& g : target.groups) groups.push_back(fmt::format("{}", fmt::join(g, ",")));
      return fmt::format("{}:{}", form, fmt::join(groups, "|"));
    }
  }
  return form;
}

std::string LiveSnapshot::phase() const {
  if (stage != RunStage::kRunning) return std::string(to_string(stage));
  if (aborted) return "aborted";
  std::vector<std::string> active;
  bool any_applied = false;
  for (const auto& f : faults) {
    if (f.active > 0) active.push_back(f.name);
    any_applied = any_applied || f.applied > 0;
  }
  if (!active.empty()) return fmt::format("fault:{}", fmt::join(active, ","));
  return any_applied ? "recovery" : "baseline";
}

std::vector<std::string> LiveSnapshot::phases() const {
  std::vector<std::string> all{"setup", "baseline"};
  for (const auto& f : faults) {
    std::string p = "fault:" + f.name;
    if (std::find(all.begin(), all.end(), p) == all.end()) all.push_back(std::move(p));
  }
  for (const char* p : {"recovery", "aborted", "unwinding", "finished"}) all.emplace_back(p);
  if (std::string now = phase(); std::find(all.begin(), all.end(), now) == all.end()) all.push_back(std::move(now));
  return all;
}

LiveStatus::LiveStatus(std::string run_id, std::string scenario, const std::vector<FaultSpec>& faults) {
  state_.run_id = std::move(run_id);
  state_.scenario = std::move(scenario);
  for (const auto& f : faults) state_.faults.push_back({f.name, f.type, target_label(f.target), 0, 0, {}});
}

void LiveStatus::set_stage(RunStage stage) {
  std::lock_guard lock(mutex_);
  state_.stage = stage;
}

void LiveStatus::fault_applied(std::size_t fault, const std::vector<std::string>& targets) {
  std::lock_guard lock(mutex_);
  if (fault >= state_.faults.size()) return;
  auto& f = state_.faults[fault];
  ++f.active;
  ++f.applied;
  f.targets = targets;
}

void LiveStatus::fault_reverted(std::size_t fault) {
  std::lock_guard lock(mutex_);
  if (fault >= state_.faults.size()) return;
  auto& f = state_.faults[fault];
  if (f.active > 0) --f.active;
}

void LiveStatus::fault_error() {
  std::lock_guard lock(mutex_);
  ++state_.fault_errors;
}

void LiveStatus::annotation_failed() {
  std::lock_guard lock(mutex_);
  ++state_.annotation_failures;
}

void LiveStatus::probe_result(const std::string& name, bool ok, std::optional<double> value, double t) {
  std::lock_guard lock(mutex_);
  auto& p = state_.probes[name];
  p.ok = ok;
  p.value = value;
  p.t = t;
  ++p.results;
  if (!ok) ++p.failures;
}

void LiveStatus::declare_probe(const std::string& name) {
  std::lock_guard lock(mutex_);
  state_.probes.try_emplace(name);
}

void LiveStatus::aborted(const std::string& reason) {
  std::lock_guard lock(mutex_);
  state_.aborted = true;
  state_.abort_reason = reason;
}

LiveSnapshot LiveStatus::snapshot() const {
  std::lock_guard lock(mutex_);
  return state_;
}

}  // namespace chaosbench::harness
