// Scenario errors as values: where (file, line:column or the --set that caused it, JSON
// path) and what was expected. validate prints them all; run stops on the first batch.
#pragma once

#include <stdexcept>
#include <string>
#include <vector>

namespace chaosbench::harness {

struct Diagnostic {
  std::string file;      // the scenario file as named on the command line
  int line = 0;          // 1-based; 0 when the value came from --set
  int column = 0;        // 1-based, in characters
  std::string origin;    // "--set KEY=VALUE" when an override produced the value
  std::string path;      // "workload.sizes.min", "faults[0].at"; "" is the document root
  std::string message;   // what was expected and what was found
  bool warning = false;  // warnings never fail validation
};

// "file:12:5: workload.iters: expected an integer, got \"abc\"".
std::string format_diagnostic(const Diagnostic& d);

// Thrown by the scenario loader when the file cannot be used: exit code 2.
class ScenarioError : public std::runtime_error {
 public:
  explicit ScenarioError(std::vector<Diagnostic> diagnostics);
  const std::vector<Diagnostic>& diagnostics() const { return diagnostics_; }

 private:
  std::vector<Diagnostic> diagnostics_;
};

}  // namespace chaosbench::harness
