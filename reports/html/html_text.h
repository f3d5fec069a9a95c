// Small helpers for report.html: HTML escaping, values with units, label lists, phase
// columns and status badges. Everything a renderer puts into the page from the run model passes here.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "reports/run_model.h"

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

// <span class="badge pass">PASS</span> for pass/warn/fail/error/aborted and severities.
std::string badge(std::string_view status);

}  // namespace chaosbench::reports::html
