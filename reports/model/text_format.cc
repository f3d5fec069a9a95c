#include "reports/model/text_format.h"

#include <cmath>
#include <fmt/format.h>

namespace chaosbench::reports {

std::string label_value(const Labels& labels, std::string_view key) {
  auto it = labels.find(std::string(key));
  return it == labels.end() ? std::string() : label_to_string(it->second);
}

std::optional<double> label_number(const Labels& labels, std::string_view key) {
  auto it = labels.find(std::string(key));
  if (it == labels.end()) return std::nullopt;
  if (const auto* i = std::get_if<std::int64_t>(&it->second)) return static_cast<double>(*i);
  if (const auto* d = std::get_if<double>(&it->second)) return *d;
  return std::nullopt;
}

std::string format_labels(const Labels& labels, bool include_phase) {
  std::string out;
  for (const auto& [key, value] : labels) {
    if (!include_phase && key == "phase") continue;
    out += fmt::format("{}{}={}", out.empty() ? "{" : ", ", key, label_to_string(value));
  }
  return out.empty() ? out : out + "}";
}

Labels without_phase(Labels labels) {
  labels.erase("phase");
  return labels;
}

std::string format_bytes(double b) {
  if (b >= double(1 << 30)) return fmt::format("{:.3g} GiB", b / (1 << 30));
  if (b >= double(1 << 20)) return fmt::format("{:.3g} MiB", b / (1 << 20));
  if (b >= double(1 << 10)) return fmt::format("{:.3g} KiB", b / (1 << 10));
  return fmt::format("{:.0f} B", b);
}

std::string format_change(double change) {
  if (!std::isfinite(change)) return "n/a";
  return fmt::format("{:+.1f}%", change * 100);
}

namespace {

std::string upper(std::string_view word) {
  std::string out(word);
  for (char& c : out) c = static_cast<char>(c >= 'a' && c <= 'z' ? c - 'a' + 'A' : c);
  return out;
}

}  // namespace

std::string verdict_text(Verdict verdict) { return upper(to_string(verdict)); }
std::string verdict_text(CheckStatus status) { return upper(to_string(status)); }
std::string verdict_text(GateStatus status) { return upper(to_string(status)); }

std::string abort_text(const AbortRecord& abort) {
  std::string out = abort.cause.empty() ? std::string("unknown cause") : abort.cause;
  if (!abort.evidence.empty()) out += " — " + abort.evidence;
  out += fmt::format(" at {:.2f} s; ", abort.decided_s);
  out += abort.reverted_s ? fmt::format("faults reverted at {:.2f} s", *abort.reverted_s) : "no fault was reverted after it";
  return out;
}

std::string repeat_text(const RepeatRecord& repeat) {
  std::size_t passed = 0;
  for (const auto& r : repeat.runs) passed += r.verdict == Verdict::kPass;
  std::string out = fmt::format("medians of {} run{} ({} passed on {} own", repeat.runs.size(),
                                repeat.runs.size() == 1 ? "" : "s", passed, repeat.runs.size() == 1 ? "its" : "their");
  if (!repeat.runs.empty())
    out += repeat.runs.size() == 1 ? fmt::format("; in {}", repeat.runs.front().dir)
                                   : fmt::format("; each in {} … {}", repeat.runs.front().dir, repeat.runs.back().dir);
  out += ")";
  if (repeat.interleaved) out += ", alternated with the baseline's";
  return out;
}

std::string xml_escape(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (char c : text) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      case '\'': out += "&apos;"; break;
      case '\n': out += "&#10;"; break;
      case '\r': out += "&#13;"; break;
      case '\t': out += "&#9;"; break;
      default:
        if (static_cast<unsigned char>(c) < 0x20) out += "\xEF\xBF\xBD";
        else out += c;
    }
  }
  return out;
}

std::string markdown_cell(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (char c : text) {
    switch (c) {
      case '|': out += "\\|"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '\n': out += ' '; break;
      case '\r': break;
      default: out += c;
    }
  }
  return out;
}

std::string github_escape_data(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (char c : text) {
    if (c == '%') out += "%25";
    else if (c == '\r') out += "%0D";
    else if (c == '\n') out += "%0A";
    else out += c;
  }
  return out;
}

std::string github_escape_property(std::string_view text) {
  std::string out;
  for (char c : github_escape_data(text)) {
    if (c == ':') out += "%3A";
    else if (c == ',') out += "%2C";
    else out += c;
  }
  return out;
}

std::string format_value(double value, const std::string& unit) {
  if (!std::isfinite(value)) return "n/a";
  std::string num;
  double a = std::fabs(value);
  if (a != 0 && (a >= 1e6 || a < 1e-3)) num = fmt::format("{:.3g}", value);
  else if (a >= 100) num = fmt::format("{:.0f}", value);
  else if (a >= 10) num = fmt::format("{:.1f}", value);
  else num = fmt::format("{:.3g}", value);
  return unit.empty() ? num : fmt::format("{} {}", num, unit);
}

}  // namespace chaosbench::reports
