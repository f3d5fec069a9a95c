// Lines to families: metadata (# HELP, # TYPE, # UNIT, # EOF), samples joined to their
// family by suffix, and the whole-input checks (size, NUL bytes, UTF-8, line length).
// The tokens of a line are exposition_lexer.cc's.
#include "harness/exposition/exposition_parser.h"

#include <array>
#include <fmt/format.h>
#include <unordered_map>

#include "harness/exposition/exposition_lexer.h"

namespace chaosbench::harness::prometheus {
namespace {

using detail::LineCursor;

struct TypeName {
  std::string_view text;
  MetricType type;
  bool in_text_format;    // 0.0.4 knows it
  bool in_open_metrics;   // OpenMetrics 1.0 knows it
};

constexpr std::array<TypeName, 9> kTypes{{
    {"counter", MetricType::kCounter, true, true},
    {"gauge", MetricType::kGauge, true, true},
    {"histogram", MetricType::kHistogram, true, true},
    {"summary", MetricType::kSummary, true, true},
    {"untyped", MetricType::kUnknown, true, false},
    {"unknown", MetricType::kUnknown, false, true},
    {"gaugehistogram", MetricType::kGaugeHistogram, false, true},
    {"info", MetricType::kInfo, false, true},
    {"stateset", MetricType::kStateSet, false, true},
}};

// The suffixes a family's samples may carry after its name ("" is the name itself).
bool suffix_allowed(MetricType type, std::string_view suffix) {
  switch (type) {
    case MetricType::kCounter: return suffix.empty() || suffix == "_total" || suffix == "_created";
    case MetricType::kHistogram:
      return suffix == "_bucket" || suffix == "_count" || suffix == "_sum" || suffix == "_created";
    case MetricType::kGaugeHistogram: return suffix == "_bucket" || suffix == "_gcount" || suffix == "_gsum";
    case MetricType::kSummary: return suffix.empty() || suffix == "_count" || suffix == "_sum" || suffix == "_created";
    case MetricType::kInfo: return suffix == "_info";
    case MetricType::kGauge:
    case MetricType::kStateSet:
    case MetricType::kUnknown: break;
  }
  return suffix.empty();
}

constexpr std::array<std::string_view, 8> kSuffixes{"_total", "_created", "_bucket", "_count", "_sum", "_gcount", "_gsum", "_info"};

// The byte at which `line` stops being UTF-8, or npos.
std::size_t invalid_utf8_at(std::string_view line) {
  std::size_t i = 0;
  while (i < line.size()) {
    const auto c = static_cast<unsigned char>(line[i]);
    std::size_t n = c < 0x80 ? 1 : (c >> 5) == 0x6 ? 2 : (c >> 4) == 0xE ? 3 : (c >> 3) == 0x1E ? 4 : 0;
    if (n == 0 || i + n > line.size() || (n == 2 && c < 0xC2) || (n == 4 && c > 0xF4)) return i;
    for (std::size_t k = 1; k < n; ++k)
      if ((static_cast<unsigned char>(line[i + k]) & 0xC0) != 0x80) return i;
    const auto c1 = static_cast<unsigned char>(n > 1 ? line[i + 1] : 0);
    if ((n == 3 && c == 0xE0 && c1 < 0xA0) || (n == 3 && c == 0xED && c1 >= 0xA0) || (n == 4 && c == 0xF0 && c1 < 0x90) ||
        (n == 4 && c == 0xF4 && c1 >= 0x90))
      return i;  // overlong forms, surrogates, beyond U+10FFFF
    i += n;
  }
  return std::string_view::npos;
}

// HELP text: \\ and \n are escapes (and \" in OpenMetrics); other backslashes stay.
std::string unescape_help(std::string_view text) {
  std::string out;
  for (std::size_t i = 0; i < text.size(); ++i) {
    if (text[i] == '\\' && i + 1 < text.size() && (text[i + 1] == '\\' || text[i + 1] == 'n' || text[i + 1] == '"')) {
      out += text[i + 1] == 'n' ? '\n' : text[i + 1];
      ++i;
    } else {
      out += text[i];
    }
  }
  return out;
}

class Assembler {
 public:
  Assembler(ExpositionFormat format, const ParseLimits& limits) : format_(format), limits_(limits) {}

  void line(std::string_view text, int line_no);
  bool ended() const { return eof_; }
  std::vector<MetricFamily> take() { return std::move(families_); }

 private:
  struct Seen {
    bool help = false, type = false, unit = false, samples = false;
  };
  void metadata(LineCursor& cur);
  std::size_t family_named(const std::string& name, LineCursor& cur, std::size_t at);
  std::size_t family_of(const std::string& sample_name, LineCursor& cur);
  bool accepts(std::size_t index, std::string_view sample_name) const;
  void check_sample(const MetricFamily& family, const ExpositionSample& s, LineCursor& cur) const;

  ExpositionFormat format_;
  const ParseLimits& limits_;
  std::vector<MetricFamily> families_;
  std::vector<Seen> seen_;
  std::unordered_map<std::string, std::size_t> by_name_;
  std::size_t current_ = std::string::npos;
  std::size_t samples_ = 0;
  bool eof_ = false;
};

void Assembler::line(std::string_view text, int line_no) {
  LineCursor cur(text, line_no);
  if (eof_) cur.fail("text after \"# EOF\" (an OpenMetrics exposition ends there)");
  if (text.size() > limits_.max_line) cur.fail(fmt::format("the line is longer than {} bytes", limits_.max_line));
  if (auto nul = text.find('\0'); nul != std::string_view::npos) cur.fail_at(nul, "a NUL byte");
  if (auto bad = invalid_utf8_at(text); bad != std::string_view::npos) cur.fail_at(bad, "a byte that is not UTF-8");
  cur.skip_blanks();
  if (cur.done()) return;  // blank lines are allowed between any two lines
  if (cur.peek() == '#') return metadata(cur);
  if (++samples_ > limits_.max_samples) cur.fail(fmt::format("more than {} samples", limits_.max_samples));
  ExpositionSample s = detail::read_sample_line(cur, format_, limits_);
  const std::size_t index = family_of(s.name, cur);
  check_sample(families_[index], s, cur);
  seen_[index].samples = true;
  current_ = index;
  families_[index].samples.push_back(std::move(s));
}

// "# HELP name text", "# TYPE name type", "# UNIT name unit", "# EOF"; any other line
// starting with "#" is a comment (0.0.4 allows them; OpenMetrics readers tolerate them).
void Assembler::metadata(LineCursor& cur) {
  cur.advance();
  if (format_ == ExpositionFormat::kOpenMetrics && cur.rest() == " EOF") {
    eof_ = true;
    return;
  }
  if (cur.skip_blanks() == 0) return;
  const std::string_view keyword = cur.token();
  if (keyword != "HELP" && keyword != "TYPE" && keyword != "UNIT") return;
  if (keyword == "UNIT" && format_ != ExpositionFormat::kOpenMetrics) return;  // a comment in 0.0.4
  if (cur.skip_blanks() == 0) cur.fail(fmt::format("expected a metric name after # {}", keyword));
  const std::size_t name_at = cur.pos();
  const std::string name = cur.peek() == '"' ? cur.quoted() : std::string(cur.metric_name());
  if (name.empty()) cur.fail(fmt::format("expected a metric name after # {}", keyword));
  const bool blank = cur.skip_blanks() > 0;
  if (!cur.done() && !blank) cur.fail("expected a space after the metric name");
  const std::size_t index = family_named(name, cur, name_at);
  Seen& seen = seen_[index];
  MetricFamily& family = families_[index];
  if (keyword == "HELP") {
    if (seen.help) cur.fail_at(name_at, fmt::format("a second # HELP line for \"{}\"", name));
    seen.help = true;
    family.help = unescape_help(cur.rest());
    return;
  }
  const std::size_t value_at = cur.pos();
  const std::string_view value = cur.token();
  cur.skip_blanks();
  if (!cur.done()) cur.fail(fmt::format("unexpected text after # {} {} {}", keyword, name, value));
  if (keyword == "UNIT") {
    if (seen.unit) cur.fail_at(name_at, fmt::format("a second # UNIT line for \"{}\"", name));
    if (!value.empty() && !name.ends_with(fmt::format("_{}", value)))
      cur.fail_at(value_at, fmt::format("the family's name \"{}\" must end in its unit, \"_{}\"", name, value));
    seen.unit = true;
    family.unit = std::string(value);
    return;
  }
  if (seen.type) cur.fail_at(name_at, fmt::format("a second # TYPE line for \"{}\"", name));
  if (seen.samples) cur.fail_at(name_at, fmt::format("# TYPE for \"{}\" after its samples", name));
  const bool om = format_ == ExpositionFormat::kOpenMetrics;
  for (const auto& t : kTypes) {
    if (t.text != value || !(om ? t.in_open_metrics : t.in_text_format)) continue;
    seen.type = true;
    family.type = t.type;
    return;
  }
  cur.fail_at(value_at, fmt::format("unknown type \"{}\" (this format knows {})", value,
                                    om ? "counter, gauge, histogram, gaugehistogram, summary, info, stateset, unknown"
                                       : "counter, gauge, histogram, summary, untyped"));
}

std::size_t Assembler::family_named(const std::string& name, LineCursor& cur, std::size_t at) {
  if (auto it = by_name_.find(name); it != by_name_.end()) return it->second;
  if (families_.size() >= limits_.max_families)
    cur.fail_at(at, fmt::format("more than {} metric families", limits_.max_families));
  MetricFamily f;
  f.name = name;
  families_.push_back(std::move(f));
  seen_.emplace_back();
  by_name_.emplace(name, families_.size() - 1);
  return families_.size() - 1;
}

bool Assembler::accepts(std::size_t index, std::string_view sample_name) const {
  const MetricFamily& f = families_[index];
  if (!sample_name.starts_with(f.name)) return false;
  return suffix_allowed(f.type, sample_name.substr(f.name.size()));
}

// The family a sample belongs to: the one being read, a declared one by name or by
// name and suffix, or a new unknown family of the sample's own name.
std::size_t Assembler::family_of(const std::string& sample_name, LineCursor& cur) {
  if (current_ != std::string::npos && accepts(current_, sample_name)) return current_;
  if (auto it = by_name_.find(sample_name); it != by_name_.end() && accepts(it->second, sample_name)) return it->second;
  for (auto suffix : kSuffixes) {
    if (!sample_name.ends_with(suffix)) continue;
    auto it = by_name_.find(sample_name.substr(0, sample_name.size() - suffix.size()));
    if (it != by_name_.end() && accepts(it->second, sample_name)) return it->second;
  }
  if (auto it = by_name_.find(sample_name); it != by_name_.end())
    cur.fail_at(0, fmt::format("\"{}\" is declared a {}, which has no sample of that bare name", sample_name,
                               to_string(families_[it->second].type)));
  return family_named(sample_name, cur, 0);
}

// What a type's samples must carry: a bucket its bound, a summary's quantile its rank.
void Assembler::check_sample(const MetricFamily& family, const ExpositionSample& s, LineCursor& cur) const {
  const bool bucket = (family.type == MetricType::kHistogram || family.type == MetricType::kGaugeHistogram) &&
                      s.name.ends_with("_bucket");
  if (bucket) {
    const std::string* le = find_label(s.labels, "le");
    if (!le) cur.fail_at(0, fmt::format("the bucket \"{}\" has no \"le\" label", s.name));
    if (!detail::parse_float(*le)) cur.fail_at(0, fmt::format("the bucket bound le=\"{}\" is not a number", *le));
  }
  if (family.type == MetricType::kSummary && s.name == family.name) {
    const std::string* q = find_label(s.labels, "quantile");
    if (!q) cur.fail_at(0, fmt::format("the summary sample \"{}\" has no \"quantile\" label", s.name));
    if (!detail::parse_float(*q)) cur.fail_at(0, fmt::format("the quantile \"{}\" is not a number", *q));
  }
}

}  // namespace

ExpositionError::ExpositionError(int line, int column, const std::string& message)
    : std::runtime_error(fmt::format("{}:{}: {}", line, column, message)), line_(line), column_(column) {}

std::vector<MetricFamily> parse_exposition(std::string_view text, ExpositionFormat format, const ParseLimits& limits) {
  if (text.size() > limits.max_bytes)
    throw ExpositionError(1, 1, fmt::format("the exposition is {} bytes; at most {} are read", text.size(), limits.max_bytes));
  Assembler assembler(format, limits);
  int line_no = 0;
  std::size_t start = 0;
  while (start < text.size()) {
    std::size_t end = text.find('\n', start);
    if (end == std::string_view::npos) end = text.size();
    std::string_view line = text.substr(start, end - start);
    if (line.ends_with('\r')) line.remove_suffix(1);  // servers that write CRLF
    assembler.line(line, ++line_no);
    start = end + 1;
  }
  if (format == ExpositionFormat::kOpenMetrics && !assembler.ended())
    throw ExpositionError(std::max(line_no, 1), 1, "an OpenMetrics exposition must end with \"# EOF\"");
  return assembler.take();
}

ExpositionFormat format_of_content_type(std::string_view content_type) {
  std::string lower;
  for (char c : content_type) lower += (c >= 'A' && c <= 'Z') ? static_cast<char>(c - 'A' + 'a') : c;
  return lower.find("application/openmetrics-text") != std::string::npos ? ExpositionFormat::kOpenMetrics
                                                                         : ExpositionFormat::kPrometheusText;
}

std::string_view to_string(MetricType type) {
  switch (type) {
    case MetricType::kCounter: return "counter";
    case MetricType::kGauge: return "gauge";
    case MetricType::kHistogram: return "histogram";
    case MetricType::kGaugeHistogram: return "gaugehistogram";
    case MetricType::kSummary: return "summary";
    case MetricType::kInfo: return "info";
    case MetricType::kStateSet: return "stateset";
    case MetricType::kUnknown: break;
  }
  return "unknown";
}

const std::string* find_label(const LabelPairs& labels, std::string_view name) {
  for (const auto& [k, v] : labels)
    if (k == name) return &v;
  return nullptr;
}

}  // namespace chaosbench::harness::prometheus
