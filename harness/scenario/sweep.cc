#include "harness/scenario/sweep.h"

#include <fmt/format.h>

namespace chaosbench::harness {
namespace {

// "workload.bucket_size" -> "bucket_size"; a quoted string value loses its quotes.
std::string short_label(const SweepAxis& axis, const std::string& value) {
  const std::string_view path = axis.path;
  const auto dot = path.rfind('.');
  const std::string_view key = dot == std::string_view::npos ? path : path.substr(dot + 1);
  std::string_view shown = value;
  if (shown.size() >= 2 && shown.front() == '"' && shown.back() == '"') shown = shown.substr(1, shown.size() - 2);
  return fmt::format("{}={}", key, shown);
}

}  // namespace

std::vector<SweepPoint> sweep_points(const std::vector<SweepAxis>& axes) {
  if (axes.empty()) return {};
  std::vector<SweepPoint> points{SweepPoint{}};
  for (const auto& axis : axes) {
    std::vector<SweepPoint> next;
    for (const auto& p : points) {
      for (const auto& v : axis.values) {
        SweepPoint q = p;
        q.overrides.push_back(fmt::format("{}={}", axis.path, v));
        q.label = q.label.empty() ? short_label(axis, v) : fmt::format("{} {}", q.label, short_label(axis, v));
        next.push_back(std::move(q));
      }
    }
    points = std::move(next);
  }
  return points;
}

}  // namespace chaosbench::harness
