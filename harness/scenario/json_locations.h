// Where each value of a JSON text starts: nlohmann/json 3.11 keeps no positions, so this
// scanner maps every JSON path to the byte offset of its value and of its key. It is
// iterative (no recursion, any nesting depth) and runs only on text that already parsed.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

namespace chaosbench::harness {

struct TextPosition {
  int line = 0;    // 1-based
  int column = 0;  // 1-based, counting characters (UTF-8 code points), not bytes
};

// The position of a byte offset in `text` (an offset past the end maps to the end).
TextPosition position_of(std::string_view text, std::size_t offset);

// Deepest nesting of arrays/objects and the offset where it first exceeds `limit`
// (nullopt when it never does). Works on any bytes, valid JSON or not.
std::optional<std::size_t> find_nesting_over(std::string_view text, std::size_t limit);

// Joins a path and a key or index the way diagnostics print them: "faults[0].at"; control
// characters in a key are written as \u0000.
std::string join_path(std::string_view parent, std::string_view key);
std::string join_path(std::string_view parent, std::size_t index);

class JsonLocations {
 public:
  // `text` must be valid JSON (parse it first); invalid text gives partial results.
  static JsonLocations scan(std::string_view text);

  std::optional<std::size_t> value_offset(const std::string& path) const;
  std::optional<std::size_t> key_offset(const std::string& path) const;

  // Keys that appear twice in one object, compared after decoding escapes (JSON allows
  // it; the last one wins, which silently hides the first): path and offset of each repeat.
  const std::vector<std::pair<std::string, std::size_t>>& duplicate_keys() const { return duplicates_; }

 private:
  std::unordered_map<std::string, std::size_t> values_;
  std::unordered_map<std::string, std::size_t> keys_;
  std::vector<std::pair<std::string, std::size_t>> duplicates_;
};

}  // namespace chaosbench::harness
