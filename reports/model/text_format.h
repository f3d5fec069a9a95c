// Text helpers the reporters (and the harness's derivations) share: label lookup and
// formatting, relative changes, and escaping for XML, Markdown table cells and GitHub
// workflow commands. Pure functions of their arguments.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "reports/model/run_model.h"

namespace chaosbench::reports {

// The label's value as text, "" when the label is absent. Labels and event fields are
// the same map type, so these read both.
std::string label_value(const Labels& labels, std::string_view key);
// The label's value as a number when it is one (integer or real); nullopt when absent or
// a string.
std::optional<double> label_number(const Labels& labels, std::string_view key);

// "{bytes=4096, rank=1}" in key order; "" when there is nothing to show. Without
// `include_phase` the phase label is left out (tables that have a column per phase).
std::string format_labels(const Labels& labels, bool include_phase = true);

// The labels less "phase": the key that matches a metric across phases.
Labels without_phase(Labels labels);

// "0.681 GB/s", "812 us", "12.5 %": a value with its unit, 3 significant digits.
std::string format_value(double value, const std::string& unit);

// 4096 as "4 KiB", 1.5 * 2^20 as "1.5 MiB" (binary units, 3 significant digits).
std::string format_bytes(double bytes);

// A relative change (0.032) as "+3.2%".
std::string format_change(double change);

// A run's verdict, a check's or a gate's status in capitals, as results.json writes it:
// "PASS", "FAIL", "ERROR", "INTERRUPTED", "ABORTED"; "PASS", "WARN", "FAIL".
std::string verdict_text(Verdict verdict);
std::string verdict_text(CheckStatus status);
std::string verdict_text(GateStatus status);

// Why and when a run stopped itself, in one line every reporter shows the same way:
// "error-rate — infer/error_rate mean 0.41 over 3s > max 0.05 at 12.30 s; faults reverted
// at 12.34 s". Without evidence the dash part is left out; without reverted_s it ends
// "; no fault was reverted after it". Not escaped.
std::string abort_text(const AbortRecord& abort);

// What a combined result of repeated runs is, in one line every reporter shows the same
// way: "medians of 5 runs (4 passed on their own; each in run-01 … run-05), alternated
// with the baseline's". Not escaped.
std::string repeat_text(const RepeatRecord& repeat);

// XML 1.0 text or attribute value: & < > " ' as entities, \n \r \t as character
// references (attribute values would otherwise be normalised to spaces), other control
// characters (not allowed in XML 1.0) as U+FFFD.
std::string xml_escape(std::string_view text);

// One GFM table cell: | escaped, < and > as entities (no raw HTML from metric names or
// messages), line breaks as spaces.
std::string markdown_cell(std::string_view text);

// GitHub workflow commands (the rules of actions/toolkit's command.ts): the message
// escapes % \r \n as %25 %0D %0A; a property value (file=, title=) also : and , as %3A %2C.
std::string github_escape_data(std::string_view text);
std::string github_escape_property(std::string_view text);

}  // namespace chaosbench::reports
