// The tokens of an exposition line. See exposition_lexer.h.
#include "harness/exposition/exposition_lexer.h"

#include <charconv>
#include <cmath>
#include <cstdint>
#include <fmt/format.h>
#include <limits>

#include "common/metrics/metric_name.h"

namespace chaosbench::harness::prometheus::detail {
namespace {

bool name_start(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || c == ':'; }
bool name_char(char c) { return name_start(c) || (c >= '0' && c <= '9'); }

bool iequals(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i) {
    char x = a[i], y = b[i];
    if (x >= 'A' && x <= 'Z') x = static_cast<char>(x - 'A' + 'a');
    if (y >= 'A' && y <= 'Z') y = static_cast<char>(y - 'A' + 'a');
    if (x != y) return false;
  }
  return true;
}

// Characters, not bytes: a column a person counts in an editor (UTF-8 continuation bytes
// do not start a character).
int column_of(std::string_view line, std::size_t at) {
  int column = 1;
  for (std::size_t i = 0; i < at && i < line.size(); ++i)
    if ((static_cast<unsigned char>(line[i]) & 0xC0) != 0x80) ++column;
  return column;
}

std::optional<double> read_timestamp(std::string_view text, ExpositionFormat format) {
  if (format == ExpositionFormat::kOpenMetrics) {
    auto v = parse_float(text);
    if (!v || !std::isfinite(*v)) return std::nullopt;
    return v;
  }
  // 0.0.4: an int64 of milliseconds since the epoch.
  std::int64_t ms = 0;
  const char* end = text.data() + text.size();
  auto [p, ec] = std::from_chars(text.data(), end, ms);
  if (ec != std::errc() || p != end) return std::nullopt;
  return static_cast<double>(ms) / 1000.0;
}

// " # {labels} value [timestamp]": checked for its form, then dropped (a scrape keeps
// series, not exemplars).
void skip_exemplar(LineCursor& cur, const ParseLimits& limits) {
  cur.expect('#', "\"#\" before an exemplar");
  if (cur.skip_blanks() == 0) cur.fail("expected a space after \"#\" of an exemplar");
  if (cur.peek() != '{') cur.fail("expected \"{\" opening an exemplar's labels");
  ExpositionSample exemplar;
  exemplar.name = "exemplar";  // so a quoted first label is not taken for a name
  read_label_set(cur, exemplar, limits);
  if (cur.skip_blanks() == 0) cur.fail("expected a space before the exemplar's value");
  const std::size_t at = cur.pos();
  if (!parse_float(cur.token())) cur.fail_at(at, "expected the exemplar's value (a number)");
  if (cur.skip_blanks() == 0 || cur.done()) {
    if (!cur.done()) cur.fail("unexpected text after the exemplar's value");
    return;
  }
  const std::size_t ts_at = cur.pos();
  if (!read_timestamp(cur.token(), ExpositionFormat::kOpenMetrics)) cur.fail_at(ts_at, "expected the exemplar's timestamp");
  cur.skip_blanks();
  if (!cur.done()) cur.fail("unexpected text after the exemplar");
}

}  // namespace

void LineCursor::fail_at(std::size_t at, const std::string& message) const {
  throw ExpositionError(line_no_, column_of(line_, at), message);
}

std::size_t LineCursor::skip_blanks() {
  std::size_t n = 0;
  while (!done() && (line_[pos_] == ' ' || line_[pos_] == '\t')) {
    ++pos_;
    ++n;
  }
  return n;
}

void LineCursor::expect(char c, std::string_view what) {
  if (peek() != c || done()) fail(fmt::format("expected {}", what));
  ++pos_;
}

std::string_view LineCursor::metric_name() {
  const std::size_t start = pos_;
  if (done() || !name_start(line_[pos_])) return {};
  while (!done() && name_char(line_[pos_])) ++pos_;
  return line_.substr(start, pos_ - start);
}

std::string LineCursor::quoted() {
  expect('"', "a '\"' opening a quoted string");
  std::string out;
  while (true) {
    if (done()) fail("the quoted string is never closed");
    const char c = line_[pos_];
    if (c == '"') {
      ++pos_;
      return out;
    }
    if (c != '\\') {
      out += c;
      ++pos_;
      continue;
    }
    const char e = pos_ + 1 < line_.size() ? line_[pos_ + 1] : '\0';
    if (e == '\\' || e == '"') out += e;
    else if (e == 'n') out += '\n';
    else fail("invalid escape (a label value may escape only \\\\, \\\" and \\n)");
    pos_ += 2;
  }
}

std::string_view LineCursor::token() {
  const std::size_t start = pos_;
  while (!done() && line_[pos_] != ' ' && line_[pos_] != '\t') ++pos_;
  return line_.substr(start, pos_ - start);
}

std::optional<double> parse_float(std::string_view text) {
  if (text.empty()) return std::nullopt;
  bool negative = false;
  if (text.front() == '+' || text.front() == '-') {
    negative = text.front() == '-';
    text.remove_prefix(1);
  }
  if (text.empty() || text.front() == '+' || text.front() == '-') return std::nullopt;
  if (iequals(text, "inf") || iequals(text, "infinity"))
    return negative ? -std::numeric_limits<double>::infinity() : std::numeric_limits<double>::infinity();
  if (iequals(text, "nan")) return std::numeric_limits<double>::quiet_NaN();
  // from_chars would take "infinity" and "nan(...)" forms of its own: only digits here.
  const char first = text.front();
  if (!((first >= '0' && first <= '9') || first == '.')) return std::nullopt;
  double v = 0;
  const char* end = text.data() + text.size();
  auto [p, ec] = std::from_chars(text.data(), end, v, std::chars_format::general);
  if (ec != std::errc() || p != end) return std::nullopt;
  return negative ? -v : v;
}

void read_label_set(LineCursor& cur, ExpositionSample& sample, const ParseLimits& limits) {
  cur.expect('{', "\"{\"");
  bool first = true;
  while (true) {
    cur.skip_blanks();
    if (cur.peek() == '}' && !cur.done()) {
      cur.advance();
      return;
    }
    const std::size_t item_at = cur.pos();
    std::string name;
    const bool was_quoted = cur.peek() == '"';
    if (was_quoted) name = cur.quoted();
    else name = std::string(cur.metric_name());
    cur.skip_blanks();
    if (was_quoted && first && sample.name.empty() && (cur.peek() == ',' || cur.peek() == '}')) {
      if (name.empty()) cur.fail_at(item_at, "a metric's name cannot be empty");
      sample.name = std::move(name);  // {"my.metric", label="v"}
    } else {
      if (name.empty()) cur.fail_at(item_at, "expected a label name or \"}\"");
      if (!was_quoted && !common::is_prometheus_label_name(name))
        cur.fail_at(item_at, fmt::format("\"{}\" is not a label name ([a-zA-Z_][a-zA-Z0-9_]*)", name));
      if (find_label(sample.labels, name)) cur.fail_at(item_at, fmt::format("label \"{}\" appears twice", name));
      if (sample.labels.size() >= limits.max_labels)
        cur.fail_at(item_at, fmt::format("more than {} labels on one sample", limits.max_labels));
      cur.expect('=', fmt::format("\"=\" after label name \"{}\"", name));
      cur.skip_blanks();
      if (cur.peek() != '"') cur.fail(fmt::format("expected the quoted value of label \"{}\"", name));
      std::string value = cur.quoted();
      sample.labels.emplace_back(std::move(name), std::move(value));
      cur.skip_blanks();
    }
    first = false;
    if (cur.peek() == ',' && !cur.done()) {
      cur.advance();
      continue;
    }
    if (cur.peek() != '}' || cur.done()) cur.fail("expected \",\" or \"}\" after a label");
  }
}

ExpositionSample read_sample_line(LineCursor& cur, ExpositionFormat format, const ParseLimits& limits) {
  ExpositionSample s;
  s.name = std::string(cur.metric_name());
  if (s.name.empty() && cur.peek() != '{') cur.fail("expected a metric name ([a-zA-Z_:][a-zA-Z0-9_:]*)");
  std::size_t blanks = cur.skip_blanks();  // 0.0.4 allows blanks before the labels
  if (cur.peek() == '{' && !cur.done()) {
    read_label_set(cur, s, limits);
    blanks = cur.skip_blanks();
  }
  if (s.name.empty()) cur.fail_at(0, "the sample has no metric name");
  if (blanks == 0) {
    if (cur.done()) cur.fail("expected a value after the metric's name and labels");
    cur.fail("expected a space between the metric's name or labels and its value");
  }
  const std::size_t value_at = cur.pos();
  const std::string_view value_text = cur.token();
  auto value = parse_float(value_text);
  if (!value) cur.fail_at(value_at, fmt::format("\"{}\" is not a number (nor NaN, +Inf, -Inf)", value_text));
  s.value = *value;
  if (cur.skip_blanks() == 0 || cur.done()) {
    if (!cur.done()) cur.fail("unexpected text after the value");
    return s;
  }
  if (cur.peek() != '#') {
    const std::size_t ts_at = cur.pos();
    const std::string_view ts_text = cur.token();
    s.timestamp_s = read_timestamp(ts_text, format);
    if (!s.timestamp_s)
      cur.fail_at(ts_at, format == ExpositionFormat::kOpenMetrics
                             ? fmt::format("\"{}\" is not a timestamp (seconds since the epoch)", ts_text)
                             : fmt::format("\"{}\" is not a timestamp (integer milliseconds since the epoch)", ts_text));
    if (cur.skip_blanks() == 0 || cur.done()) {
      if (!cur.done()) cur.fail("unexpected text after the timestamp");
      return s;
    }
    if (cur.peek() != '#') cur.fail("unexpected text after the timestamp");
  }
  skip_exemplar(cur, limits);
  return s;
}

}  // namespace chaosbench::harness::prometheus::detail
