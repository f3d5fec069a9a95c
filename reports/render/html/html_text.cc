#include "reports/render/html/html_text.h"

#include <algorithm>
#include <cmath>
#include <fmt/format.h>

#include "reports/model/text_format.h"

namespace chaosbench::reports::html {

// XML escaping is also correct HTML5 (text and quoted attributes alike).
std::string escape(std::string_view text) { return xml_escape(text); }

std::string format_unit(double value, const std::string& unit) {
  if (unit == "bytes" && std::isfinite(value)) {
    double a = std::fabs(value);
    if (a >= 1024.0 * 1024 * 1024) return fmt::format("{:.3g} GiB", value / (1024.0 * 1024 * 1024));
    if (a >= 1024.0 * 1024) return fmt::format("{:.3g} MiB", value / (1024.0 * 1024));
    if (a >= 1024.0) return fmt::format("{:.3g} KiB", value / 1024.0);
    return fmt::format("{:.0f} B", value);
  }
  return format_value(value, unit);
}

std::string label(const Labels& labels, std::string_view key) {
  auto it = labels.find(std::string(key));
  return it == labels.end() ? std::string() : label_to_string(it->second);
}

std::string labels_text(const Labels& labels, std::string_view skip) {
  std::string out;
  for (const auto& [key, value] : labels) {
    if (key == skip) continue;
    std::string text = label_to_string(value);
    if (key == "bytes" && !std::holds_alternative<std::string>(value)) {
      double b = std::holds_alternative<std::int64_t>(value) ? static_cast<double>(std::get<std::int64_t>(value))
                                                            : std::get<double>(value);
      text = format_unit(b, "bytes");
    }
    out += fmt::format("{}{}={}", out.empty() ? "" : ", ", key, text);
  }
  return out;
}

std::vector<std::string> phase_columns(const RunResult& run) {
  std::vector<std::string> order;
  auto add = [&](const std::string& p) {
    if (!p.empty() && std::find(order.begin(), order.end(), p) == order.end()) order.push_back(p);
  };
  for (const auto& p : run.phases) add(p.name);
  bool overall = false;
  for (const auto& m : run.metrics) {
    std::string p = label(m.labels, "phase");
    if (p == "overall") overall = true;
    else add(p);
  }
  if (overall) order.push_back("overall");
  return order;
}

std::string_view fault_swatch(std::size_t i) {
  static constexpr std::string_view kSwatches[] = {"rgba(228,87,46,0.35)",  "rgba(142,68,173,0.35)", "rgba(240,162,2,0.4)",
                                                   "rgba(23,162,184,0.35)", "rgba(194,24,91,0.3)",   "rgba(41,163,90,0.35)"};
  return kSwatches[i % std::size(kSwatches)];
}

std::vector<std::string> fault_swatches(const RunResult& run) {
  std::vector<std::string> out;
  std::size_t applied = 0;
  for (const auto& f : run.faults)
    out.push_back(f.applied_at_s ? fmt::format("<span class=\"swatch\" style=\"background:{}\"></span>",
                                               fault_swatch(applied++))
                                 : "");
  return out;
}

std::string fault_name_html(const FaultRecord& f, std::string_view swatch) {
  return fmt::format("{}{}{}", swatch, escape(f.name), f.occurrence > 1 ? fmt::format(" #{}", f.occurrence) : "");
}

std::string targets_text(const FaultRecord& f) {
  std::string out;
  for (const auto& t : f.targets) out += (out.empty() ? "" : ", ") + t;
  return out;
}

std::string comparison_html(const MetricComparison& c) {
  auto pct = [](double x) { return fmt::format("{:+.1f}%", x * 100); };
  std::string ci = c.ci_low && c.ci_high ? fmt::format(" [{}, {}]", pct(*c.ci_low), pct(*c.ci_high)) : "";
  const bool pass = c.status == GateStatus::kPass;
  const bool named = c.stat != "p50" && c.stat != "value";  // p99 says so; the usual statistics go unnamed
  // Appended, not " " + badge(): GCC 12 sees a false -Wrestrict overlap in that operator+.
  std::string mark;
  if (!pass) mark.append(" ").append(badge(to_string(c.status)));
  return fmt::format("<div class=\"cmp-one{}\" title=\"{}\">{}{}{}</div>", pass ? " pass" : "",
                     escape(fmt::format("vs baseline run: {} {}{} {}; {}", c.stat, pct(c.change), ci,
                                        to_string(c.status), c.reason)),
                     named ? escape(c.stat) + " " : "", fmt::format("{:+.0f}%", c.change * 100), mark);
}

std::string badge(std::string_view status) {
  std::string upper;
  for (char c : status) upper += static_cast<char>(c >= 'a' && c <= 'z' ? c - 'a' + 'A' : c);
  return fmt::format("<span class=\"badge {}\">{}</span>", escape(status), escape(upper));
}

}  // namespace chaosbench::reports::html
