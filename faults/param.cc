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

std::optional<ParamValue> default_value(const ParamSpec& p) {
  if (p.default_text.empty()) return std::nullopt;
  auto value_or_throw = [&](auto parsed) -> ParamValue {
    if (!parsed) throw std::logic_error(fmt::format("bad default for {}: {}", p.name, p.default_text));
    return *parsed.value;
  };
  switch (p.kind) {
    case ParamKind::kDuration: return value_or_throw(common::parse_duration(p.default_text));
    case ParamKind::kRate: return value_or_throw(common::parse_rate(p.default_text));
    case ParamKind::kSize: return value_or_throw(common::parse_size(p.default_text));
    case ParamKind::kPercent: return value_or_throw(common::parse_percent(p.default_text));
    case ParamKind::kInteger: return static_cast<std::int64_t>(std::stoll(std::string(p.default_text)));
    case ParamKind::kNumber: return std::stod(std::string(p.default_text));
    case ParamKind::kString: return std::string(p.default_text);
    case ParamKind::kBool: return p.default_text == "true";
  }
  return std::nullopt;
}

Params defaults_of(std::span<const ParamSpec> specs) {
  Params out;
  for (const auto& p : specs)
    if (auto d = default_value(p)) out.set(std::string(p.name), std::move(*d));
  return out;
}

}  // namespace chaosbench::faults
