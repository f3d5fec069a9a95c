// The text format's spelling rules (exposition_writer.h).
#include "harness/exposition/exposition_writer.h"

#include <cmath>
#include <fmt/format.h>

namespace chaosbench::harness::prometheus {
namespace {

bool exposition_name_char(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
}

bool becomes_underscore(char c) { return c == '_' || !exposition_name_char(c); }

void append_sanitised(std::string& out, std::string_view s) {
  for (char c : s) out += exposition_name_char(c) ? c : '_';
}

// Backslash and newline always; the double quote only inside a label value.
std::string escaped(std::string_view text, bool quote) {
  std::string out;
  out.reserve(text.size());
  for (char c : text) {
    if (c == '\\') out += "\\\\";
    else if (c == '\n') out += "\\n";
    else if (c == '"' && quote) out += "\\\"";
    else out += c;
  }
  return out;
}

}  // namespace

std::string metric_name(std::string_view ours) {
  std::string out = "chaosbench_";
  out.reserve(out.size() + ours.size());
  append_sanitised(out, ours);
  return out;
}

std::string label_name(std::string_view ours) {
  if (ours.empty()) return "_";
  std::string out;
  out.reserve(ours.size() + 1);
  if (ours.front() >= '0' && ours.front() <= '9') out += '_';
  // "__" opens names Prometheus keeps for itself; a character that becomes '_' counts too.
  else if (ours.size() >= 2 && becomes_underscore(ours[0]) && becomes_underscore(ours[1])) out += 'x';
  append_sanitised(out, ours);
  return out;
}

std::string escape_label_value(std::string_view value) { return escaped(value, true); }

std::string escape_help(std::string_view help) { return escaped(help, false); }

std::string format_value(double value) {
  if (std::isnan(value)) return "NaN";
  if (std::isinf(value)) return value > 0 ? "+Inf" : "-Inf";
  return fmt::format("{}", value);
}

void ExpositionWriter::family(std::string_view name, std::string_view type, std::string_view help) {
  fmt::format_to(std::back_inserter(out_), "# HELP {} {}\n# TYPE {} {}\n", name, escape_help(help), name, type);
}

void ExpositionWriter::sample(std::string_view name, const ExpositionLabels& labels, double value) {
  out_ += name;
  if (!labels.empty()) {
    out_ += '{';
    bool first = true;
    for (const auto& [k, v] : labels) {
      if (!first) out_ += ',';
      first = false;
      out_ += label_name(k);
      out_ += "=\"";
      out_ += escape_label_value(v);
      out_ += '"';
    }
    out_ += '}';
  }
  out_ += ' ';
  out_ += format_value(value);
  out_ += '\n';
}

}  // namespace chaosbench::harness::prometheus
