#include "faults/param.h"

#include <fmt/format.h>

namespace chaosbench::faults {

std::string_view to_string(ParamKind kind) {
  switch (kind) {
    case ParamKind::kDuration: return "duration";
    case ParamKind::kRate: return "rate";
    case ParamKind::kSize: return "size";
    case ParamKind::kPercent: return "percentage";
    case ParamKind::kInteger: return "integer";
    case ParamKind::kNumber: return "number";
    case ParamKind::kString: return "string";
    case ParamKind::kBool: return "boolean";
  }
  return "?";
}

std::string to_string(const ParamValue& value) {
  return std::visit(
      [](const auto& v) -> std::string {
        using T = std::decay_t<decltype(v)>;
        if constexpr (std::is_same_v<T, std::string>) return v;
        else if constexpr (std::is_same_v<T, bool>) return v ? "true" : "false";
        else if constexpr (std::is_same_v<T, std::int64_t> || std::is_same_v<T, double>)
          return fmt::format("{}", v);
        else return to_string(v);
      },
      value);
}

}  // namespace chaosbench::faults
