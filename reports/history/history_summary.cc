#include "reports/history/history_summary.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <fmt/format.h>
#include <limits>

#include "reports/model/text_format.h"

namespace chaosbench::reports {
namespace {

// One glyph per value (sparkline's rule).
std::vector<std::string> glyphs(const std::vector<double>& values) {
  static constexpr std::array<const char*, 8> kBlocks{"▁", "▂", "▃", "▄", "▅", "▆", "▇", "█"};
  double lo = std::numeric_limits<double>::infinity(), hi = -lo;
  for (double v : values)
    if (std::isfinite(v)) {
      lo = std::min(lo, v);
      hi = std::max(hi, v);
    }
  std::vector<std::string> out;
  for (double v : values) {
    if (!std::isfinite(v)) out.emplace_back(" ");
    else if (!(hi > lo)) out.emplace_back(kBlocks[3]);
    else out.emplace_back(kBlocks[std::min<std::size_t>(7, static_cast<std::size_t>((v - lo) / (hi - lo) * 8.0))]);
  }
  return out;
}

// The last kSparklinePoints values and the current one on one scale, the current in bold.
std::string trend_cell(const HistoryRow& r) {
  const std::size_t from = r.values.size() > kSparklinePoints ? r.values.size() - kSparklinePoints : 0;
  std::vector<double> points(r.values.begin() + static_cast<std::ptrdiff_t>(from), r.values.end());
  points.push_back(r.current);
  const auto g = glyphs(points);
  std::string out;
  for (std::size_t i = 0; i + 1 < g.size(); ++i) out += g[i];
  return out + (out.empty() ? "**" : " **") + g.back() + "**";
}

}  // namespace

std::string sparkline(const std::vector<double>& values) {
  std::string out;
  for (const auto& g : glyphs(values)) out += g;
  return out;
}

std::string history_summary_markdown(const HistoryGateResult& result, const HistoryPlace& place,
                                     const std::string& current_run) {
  std::string out = fmt::format("### chaosbench history: {} on {}: {}\n\n", markdown_cell(place.scenario),
                                markdown_cell(place.testbed), verdict_text(result.verdict));
  out += fmt::format("Run {} against the last {} runs{}; {:g}% prediction intervals.\n\n", markdown_cell(current_run),
                     result.history_runs,
                     result.newest_run.empty() ? "" : " (newest " + markdown_cell(result.newest_run) + ")",
                     (1 - result.alpha) * 100);
  out += "| verdict | metric | stat | trend | current | interval | change |\n|---|---|---|---|---:|---:|---:|\n";
  std::vector<const HistoryRow*> rows;
  for (auto status : {GateStatus::kFail, GateStatus::kWarn, GateStatus::kPass})
    for (const auto& r : result.rows)
      if (r.status == status) rows.push_back(&r);
  std::string reasons;
  for (std::size_t i = 0; i < rows.size() && i < kSummaryRows; ++i) {
    const HistoryRow& r = *rows[i];
    const std::string interval =
        r.interval ? format_value(r.interval->low, "") + " .. " + format_value(r.interval->high, r.key.unit) : "-";
    out += fmt::format("| {} | {} | {} | {} | {} | {} | {} |\n", verdict_text(r.status), markdown_cell(key_text(r.key)),
                       r.key.stat, trend_cell(r), markdown_cell(format_value(r.current, r.key.unit)),
                       markdown_cell(interval),
                       std::isfinite(r.change) ? format_change(r.change) : "-");
    if (r.status != GateStatus::kPass)
      reasons += fmt::format("- **{}** {} {}: {}\n", verdict_text(r.status), markdown_cell(key_text(r.key)), r.key.stat,
                             markdown_cell(r.reason));
  }
  if (rows.size() > kSummaryRows) out += fmt::format("\n{} more rows (`chaosbench history gate` lists them all).\n",
                                                     rows.size() - kSummaryRows);
  if (!reasons.empty()) out += "\n" + reasons;
  return out + "\n";
}

}  // namespace chaosbench::reports
