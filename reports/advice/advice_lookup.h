// What the tuning-advice rules look up in a run and how they word it: a record by name,
// phase and exact labels, a record's median, the phase a configuration is judged by, and
// the fault a fault window belongs to. Shared by the rule files (tuning_advice.cc,
// parallel_advice.cc). Pure.
#pragma once

#include <string>
#include <string_view>

#include "reports/model/run_model.h"

namespace chaosbench::reports {

// The record of `name` whose labels are exactly `labels` plus phase = `phase`.
const MetricRecord* find_record(const RunResult& run, std::string_view name, std::string_view phase, const Labels& labels = {});

// The record's p50 when it has stats, else its value.
double p50(const MetricRecord& m);

// The phase a tuning rule judges the configuration by: the fault-free baseline when the
// run has one for `name`, else the whole run.
std::string tuning_phase(const RunResult& run, std::string_view name);

// A fraction (0.38) as a percentage ("38.0 %").
std::string pct(double fraction);

// The fault a "fault:NAME" phase names; nullptr for other phases.
const FaultRecord* fault_of_phase(const RunResult& run, std::string_view phase);

// "straggler (node.cpu_throttle on node1)".
std::string describe_fault(const FaultRecord& f);

}  // namespace chaosbench::reports
