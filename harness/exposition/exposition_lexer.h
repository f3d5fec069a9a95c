// The tokens of one exposition line (internal to the exposition parser): names, quoted
// strings with their escapes, label sets, numbers and timestamps, read left to right by a
// cursor that throws ExpositionError at the character where the line stops making sense.
// Threads: a cursor belongs to one call; nothing is shared.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

#include "harness/exposition/exposition_parser.h"

namespace chaosbench::harness::prometheus::detail {

class LineCursor {
 public:
  LineCursor(std::string_view line, int line_no) : line_(line), line_no_(line_no) {}

  [[noreturn]] void fail(const std::string& message) const { fail_at(pos_, message); }
  [[noreturn]] void fail_at(std::size_t at, const std::string& message) const;

  bool done() const { return pos_ >= line_.size(); }
  char peek() const { return done() ? '\0' : line_[pos_]; }
  std::size_t pos() const { return pos_; }
  void advance(std::size_t n = 1) { pos_ += n; }
  std::string_view rest() const { return line_.substr(pos_); }
  // Spaces and tabs; returns how many were skipped.
  std::size_t skip_blanks();
  void expect(char c, std::string_view what);

  // [a-zA-Z_:][a-zA-Z0-9_:]* (the name token at the cursor); "" when none starts here.
  std::string_view metric_name();
  // A "..." string: \\ \" \n unescaped, any other escape an error; UTF-8 kept as is.
  std::string quoted();
  // The characters up to the next blank or the end of the line.
  std::string_view token();

 private:
  std::string_view line_;
  int line_no_;
  std::size_t pos_ = 0;
};

// "1.5", "-2e-3", "+Inf", "-Inf", "NaN" (any case, as Go's ParseFloat reads them);
// nullopt for anything else, hex floats and values beyond a double included.
std::optional<double> parse_float(std::string_view text);

// Reads "{name="value",...}" at the cursor into `sample` (the opening brace is next).
// A quoted first element without "=" is the metric's name (the UTF-8 names of newer
// Prometheus releases), allowed only when the line had none before the brace.
void read_label_set(LineCursor& cur, ExpositionSample& sample, const ParseLimits& limits);

// A whole sample line: name, labels, value, optional timestamp (milliseconds in 0.0.4,
// seconds in OpenMetrics) and an optional exemplar (" # {labels} value [timestamp]"),
// which is read for its form and dropped.
ExpositionSample read_sample_line(LineCursor& cur, ExpositionFormat format, const ParseLimits& limits);

}  // namespace chaosbench::harness::prometheus::detail
