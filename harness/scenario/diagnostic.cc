#include "harness/scenario/diagnostic.h"

#include <fmt/format.h>

namespace chaosbench::harness {

std::string format_diagnostic(const Diagnostic& d) {
  std::string where = d.file;
  if (!d.origin.empty()) {
    where += fmt::format(": {}", d.origin);
  } else if (d.line > 0) {
    where += fmt::format(":{}:{}", d.line, d.column);
  }
  return fmt::format("{}: {}{}: {}", where, d.warning ? "warning: " : "",
                     d.path.empty() ? "(root)" : d.path, d.message);
}

namespace {
std::string summarize(const std::vector<Diagnostic>& ds) {
  if (ds.empty()) return "invalid scenario";
  std::string out = format_diagnostic(ds.front());
  if (ds.size() > 1) out += fmt::format(" (and {} more)", ds.size() - 1);
  return out;
}
}  // namespace

ScenarioError::ScenarioError(std::vector<Diagnostic> diagnostics)
    : std::runtime_error(summarize(diagnostics)), diagnostics_(std::move(diagnostics)) {}

}  // namespace chaosbench::harness
