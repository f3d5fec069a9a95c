#include "common/values/labels.h"

#include <fmt/format.h>

namespace chaosbench::common {

std::string label_to_string(const LabelValue& v) {
  if (const auto* s = std::get_if<std::string>(&v)) return *s;
  if (const auto* i = std::get_if<std::int64_t>(&v)) return std::to_string(*i);
  return fmt::format("{}", std::get<double>(v));
}

}  // namespace chaosbench::common
