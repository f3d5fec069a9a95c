#include "reports/render/report_set.h"

#include "common/files/safe_files.h"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <stdexcept>

#include <fmt/format.h>

#include "reports/render/console_summary.h"
#include "reports/render/html_report.h"
#include "reports/model/json_io.h"
#include "reports/render/bmf_report.h"
#include "reports/render/junit_report.h"
#include "reports/render/markdown_report.h"
#include "reports/render/trace_report.h"

namespace chaosbench::reports {
namespace {

struct FormatInfo {
  ReportFormat format;
  std::string_view name;
  std::string_view file;
};

constexpr FormatInfo kFormats[] = {
    {ReportFormat::kJson, "json", "results.json"},   {ReportFormat::kHtml, "html", "report.html"},
    {ReportFormat::kMarkdown, "md", "summary.md"},   {ReportFormat::kJunit, "junit", "junit.xml"},
    {ReportFormat::kTrace, "trace", "trace.json"},   {ReportFormat::kConsole, "console", "-"},
    {ReportFormat::kBmf, "bmf", "bmf.json"},
};

const FormatInfo& info(ReportFormat f) {
  for (const auto& i : kFormats)
    if (i.format == f) return i;
  return kFormats[0];
}

void write_file(const std::string& path, const std::string& text) {
  if (std::string error = common::write_file_atomically(path, text, 0644); !error.empty())
    throw std::runtime_error(error);
}

}  // namespace

ReportRequest parse_report_request(std::string_view spec) {
  const auto eq = spec.find('=');
  std::string_view name = spec.substr(0, eq);
  if (name == "markdown") name = "md";
  for (const auto& i : kFormats) {
    if (i.name != name) continue;
    ReportRequest r;
    r.format = i.format;
    if (eq != std::string_view::npos) {
      r.path = std::string(spec.substr(eq + 1));
      if (r.path.empty()) throw std::invalid_argument(fmt::format("--report {}: the file name after '=' is empty", spec));
    }
    return r;
  }
  throw std::invalid_argument(fmt::format(
      "--report {}: unknown format \"{}\" (known: console, json, html, md, junit, trace, bmf; FORMAT=FILE names the "
      "file)",
      spec, name));
}


std::string default_file_name(ReportFormat f) { return std::string(info(f).file); }

std::vector<ReportRequest> default_reports() {
  return {{ReportFormat::kJson, ""},     {ReportFormat::kHtml, ""},  {ReportFormat::kMarkdown, ""},
          {ReportFormat::kJunit, ""},    {ReportFormat::kTrace, ""}};
}

std::string render_report(ReportFormat f, const RunResult& run, const std::string& run_dir) {
  switch (f) {
    case ReportFormat::kConsole: return console_summary(run, run_dir);
    case ReportFormat::kJson: return to_json(run) + "\n";
    case ReportFormat::kHtml: return render_html(run);
    case ReportFormat::kMarkdown: return render_markdown(run);
    case ReportFormat::kJunit: return render_junit(run);
    case ReportFormat::kTrace: return render_trace(run);
    case ReportFormat::kBmf: return render_bmf(run);
  }
  return {};
}

std::vector<std::string> write_reports(const RunResult& run, const std::string& dir,
                                       const std::vector<ReportRequest>& requests) {
  std::vector<std::string> written;
  for (const auto& r : requests) {
    std::string path = r.path.empty() ? default_file_name(r.format) : r.path;
    const std::string text = render_report(r.format, run, dir);
    if (path == "-") {
      std::cout << text << std::flush;
      continue;
    }
    if (std::filesystem::path(path).is_relative()) path = (std::filesystem::path(dir) / path).string();
    write_file(path, text);
    written.push_back(path);
  }
  return written;
}

}  // namespace chaosbench::reports
