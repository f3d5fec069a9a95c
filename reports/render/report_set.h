// The report formats a run is written in, and writing them: every reporter renders from
// the run model alone, so `run` and `chaosbench report results.json` produce the same
// files. `--report FORMAT[=FILE]` picks formats (repeatable); without it every format is
// written under its default name in the run directory.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "reports/model/run_model.h"

namespace chaosbench::reports {

enum class ReportFormat { kConsole, kJson, kHtml, kMarkdown, kJunit, kTrace, kBmf };

struct ReportRequest {
  ReportFormat format = ReportFormat::kJson;
  std::string path;  // empty: the default name in the output directory; "-": standard output
};

// "html" or "html=FILE". Formats: console, json, html, md (or markdown), junit, trace,
// bmf (Bencher Metric Format, bmf_report.h; written only when asked for).
// Throws std::invalid_argument naming the known formats.
ReportRequest parse_report_request(std::string_view spec);
// results.json, report.html, summary.md, junit.xml, trace.json, bmf.json; "-" for console.
std::string default_file_name(ReportFormat f);
// The file formats written when none is asked for (all but the console and bmf), in the
// order they are written.
std::vector<ReportRequest> default_reports();

std::string render_report(ReportFormat f, const RunResult& run, const std::string& run_dir);
// Writes each request (relative paths are relative to `dir`; each file through a
// temporary name and a rename) and returns the paths written. Throws
// std::runtime_error naming the file that cannot be written.
std::vector<std::string> write_reports(const RunResult& run, const std::string& dir,
                                       const std::vector<ReportRequest>& requests);

}  // namespace chaosbench::reports
