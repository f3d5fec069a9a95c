// Small helpers for report.html: HTML escaping, values with units, label lists, phase
// columns and status badges. Everything a renderer puts into the page from the run model passes here.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "reports/model/run_model.h"

namespace chaosbench::reports::html {

// & < > " ' as entities: safe in element text and in quoted attributes.
std::string escape(std::string_view text);

// A value with its unit for people: bytes as KiB/MiB/GiB, otherwise format_value's
// three significant digits ("812 us", "0.681 GB/s"). Not escaped.
std::string format_unit(double value, const std::string& unit);

// "collective=allreduce, bytes=64 KiB": the labels but `skip`, in key order; byte-valued
// labels ("bytes") read as sizes. Not escaped.
std::string labels_text(const Labels& labels, std::string_view skip = "phase");

// The value of one label, "" when absent.
std::string label(const Labels& labels, std::string_view key);

// Phase names as columns: the run's phases in order, then others the metric records name,
// "overall" last when present.
std::vector<std::string> phase_columns(const RunResult& run);

// The colour of the i-th applied fault's window wherever the page marks it (the faults
// table's swatches, the probe lanes): the page's script shades the charts in the same order
// (report_template.html, faultColours), lighter.
std::string_view fault_swatch(std::size_t i);

// The swatch (a small square in fault_swatch's colour) of each of run.faults, "" for a
// fault never applied: the same colour marks an occurrence in every table of the page.
std::vector<std::string> fault_swatches(const RunResult& run);

// A fault occurrence as the tables name it: its swatch, its name, "#2" from the second
// occurrence on. Escaped.
std::string fault_name_html(const FaultRecord& f, std::string_view swatch);

// "node1, node2". Not escaped.
std::string targets_text(const FaultRecord& f);

// One baseline-run comparison for the cell of its record: "+20% FAIL" in a <div>, whole
// percent as the phase deltas (the statistic named only when it is not p50 or the single
// value, "p99 +3%"; the status only for WARN and FAIL, a PASS in muted text) whose tooltip
// holds the statistic, the change to 0.1 %, the confidence interval and the gate's reason.
std::string comparison_html(const MetricComparison& c);

// <span class="badge pass">PASS</span> for pass/warn/fail/error/aborted and severities.
std::string badge(std::string_view status);

}  // namespace chaosbench::reports::html
