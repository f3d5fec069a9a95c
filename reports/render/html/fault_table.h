// The per-fault table of report.html ("Per-fault impact"): one row per fault occurrence
// (name, type, targets) and one column per per-fault figure: time to detect, time to
// recover, lost steps and throughput retention first, then any other metric recorded per
// fault (fault/apply_latency, fault/effect_error, ...). A cell without a record shows "–".
// These figures have one value per fault, so as rows of the phase table they were rows of
// empty cells; phase_table.h leaves out every record per_fault_record() takes.
#pragma once

#include <string>
#include <string_view>

#include "reports/model/run_model.h"

namespace chaosbench::reports::html {

// A figure of one fault rather than of a phase: a record (or a baseline-run comparison
// of one) labelled `fault` (per occurrence when it also has `occurrence`, else for every
// occurrence of that fault), or resilience/throughput_retention, whose phase `fault:NAME`
// names the fault. With --baseline, such a figure's comparison shows under its value.
bool per_fault_record(std::string_view name, const Labels& labels);

std::string fault_table_html(const RunResult& run);

}  // namespace chaosbench::reports::html
