// See metric_name.h.
#include "common/metrics/metric_name.h"

namespace chaosbench::common {

bool is_prometheus_metric_name(std::string_view name) {
  if (name.empty()) return false;
  for (std::size_t i = 0; i < name.size(); ++i) {
    const char c = name[i];
    const bool letter = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || c == ':';
    if (!letter && !(i > 0 && c >= '0' && c <= '9')) return false;
  }
  return true;
}

bool is_prometheus_label_name(std::string_view name) {
  return is_prometheus_metric_name(name) && name.find(':') == std::string_view::npos;
}

bool is_metric_name(std::string_view name) {
  if (is_prometheus_metric_name(name)) return true;
  return !name.empty() && name.find('/') != std::string_view::npos && name.front() != '/' && name.back() != '/' &&
         name.find("//") == std::string_view::npos;
}

}  // namespace chaosbench::common
