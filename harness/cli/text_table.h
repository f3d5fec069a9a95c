// The aligned tables `compare` and `history gate|show` print: each column as wide as its
// widest cell, two spaces between columns, text columns left-aligned and the rest
// (numbers) right-aligned, and under a row its note (a reason), indented past the first
// column.
#pragma once

#include <cstddef>
#include <ostream>
#include <string>
#include <vector>

namespace chaosbench::harness {

struct TextTable {
  std::vector<std::vector<std::string>> rows;  // the first is the header; all as wide as it
  std::vector<std::string> notes;              // one per row, "" for none
  std::size_t left_columns = 1;                // the first this many are text
};

void print_table(const TextTable& table, std::ostream& out);

}  // namespace chaosbench::harness
