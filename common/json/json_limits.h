// JSON from bytes we do not control (HTTP bodies, results files, journals, manifests,
// protocol lines): nesting is bounded before nlohmann/json sees the text, because its
// dump(), comparison and copy recurse once per level, so 100,000 nested arrays overflow
// the stack wherever such a value is later echoed, compared or copied.
#pragma once

#include <cstddef>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

namespace chaosbench::common {

// Deep enough for every document chaosbench writes (results.json nests 7 levels) and for
// any scenario a person writes; shallow enough that recursion over it is harmless.
inline constexpr std::size_t kMaxJsonDepth = 64;

struct JsonDepth {
  bool ok = true;
  std::size_t offset = 0;  // when !ok: the byte that opened one level too many
};

// Linear scan, no allocation: counts [ and { outside strings. Says nothing else about
// the text's validity (the parser does that).
JsonDepth check_json_depth(std::string_view text, std::size_t max_depth = kMaxJsonDepth);

// Parses without exceptions into `Json` (nlohmann::json, or ordered_json to keep the key
// order). On a syntax error or too deep nesting returns a discarded value and, when
// `error` is given, a message that never quotes the input.
std::string json_depth_error(const JsonDepth& depth, std::size_t max_depth);
template <class Json = nlohmann::json>
Json parse_json_bounded(std::string_view text, std::string* error = nullptr, std::size_t max_depth = kMaxJsonDepth) {
  if (const JsonDepth d = check_json_depth(text, max_depth); !d.ok) {
    if (error) *error = json_depth_error(d, max_depth);
    return Json(Json::value_t::discarded);
  }
  Json j = Json::parse(text.begin(), text.end(), nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded() && error) *error = "not valid JSON";
  return j;
}

}  // namespace chaosbench::common
