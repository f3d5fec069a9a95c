#include "common/json_limits.h"

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

nlohmann::json parse_json_bounded(std::string_view text, std::string* error, std::size_t max_depth) {
  if (const JsonDepth d = check_json_depth(text, max_depth); !d.ok) {
    if (error) *error = fmt::format("JSON nests deeper than {} levels (at byte {})", max_depth, d.offset);
    return nlohmann::json(nlohmann::json::value_t::discarded);
  }
  nlohmann::json j = nlohmann::json::parse(text.begin(), text.end(), nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded() && error) *error = "not valid JSON";
  return j;
}

}  // namespace chaosbench::common
