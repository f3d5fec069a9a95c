#include "harness/runner/label_values.h"

namespace chaosbench::harness {

std::optional<double> number_label(const reports::Labels& labels, const char* key) {
  auto it = labels.find(key);
  if (it == labels.end()) return std::nullopt;
  if (const auto* i = std::get_if<std::int64_t>(&it->second)) return static_cast<double>(*i);
  if (const auto* d = std::get_if<double>(&it->second)) return *d;
  return std::nullopt;
}

std::string string_label(const reports::Labels& labels, const char* key) {
  auto it = labels.find(key);
  return it == labels.end() ? std::string() : reports::label_to_string(it->second);
}

}  // namespace chaosbench::harness
