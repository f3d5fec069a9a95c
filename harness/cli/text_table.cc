#include "harness/cli/text_table.h"

#include <algorithm>

namespace chaosbench::harness {
namespace {

// Columns on a terminal: one per UTF-8 code point (sparklines are 3 bytes a glyph), not per byte.
std::size_t display_width(const std::string& s) {
  std::size_t n = 0;
  for (unsigned char c : s) n += (c & 0xC0) != 0x80;
  return n;
}

std::string padded(const std::string& cell, std::size_t width, bool left) {
  const std::string pad(width - std::min(width, display_width(cell)), ' ');
  return left ? cell + pad : pad + cell;
}

}  // namespace

void print_table(const TextTable& table, std::ostream& out) {
  if (table.rows.empty()) return;
  const std::size_t columns = table.rows.front().size();
  std::vector<std::size_t> width(columns, 0);
  for (const auto& r : table.rows)
    for (std::size_t i = 0; i < columns && i < r.size(); ++i) width[i] = std::max(width[i], display_width(r[i]));
  for (std::size_t k = 0; k < table.rows.size(); ++k) {
    const auto& r = table.rows[k];
    std::string line;
    for (std::size_t i = 0; i < columns; ++i) {
      const std::string& cell = i < r.size() ? r[i] : std::string();
      line += padded(cell, width[i], i < table.left_columns);
      if (i + 1 < columns) line += "  ";
    }
    while (!line.empty() && line.back() == ' ') line.pop_back();
    out << line << "\n";
    if (k < table.notes.size() && !table.notes[k].empty())
      out << std::string(width[0] + 2, ' ') << table.notes[k] << "\n";
  }
}

}  // namespace chaosbench::harness
