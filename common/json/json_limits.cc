#include "common/json/json_limits.h"

#include <fmt/format.h>

namespace chaosbench::common {

JsonDepth check_json_depth(std::string_view text, std::size_t max_depth) {
  std::size_t depth = 0;
  bool in_string = false, escaped = false;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (in_string) {
      if (escaped) escaped = false;
      else if (c == '\\') escaped = true;
      else if (c == '"') in_string = false;
      continue;
    }
    if (c == '"') {
      in_string = true;
    } else if (c == '[' || c == '{') {
      if (++depth > max_depth) return {false, i};
    } else if ((c == ']' || c == '}') && depth > 0) {
      --depth;
    }
  }
  return {};
}

std::string json_depth_error(const JsonDepth& depth, std::size_t max_depth) {
  return fmt::format("JSON nests deeper than {} levels (at byte {})", max_depth, depth.offset);
}

}  // namespace chaosbench::common
