// Grafana annotation requests (annotation_request.h).
#include "harness/grafana/annotation_request.h"

#include <algorithm>
#include <string_view>
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

#include "common/json/json_limits.h"

namespace chaosbench::harness::grafana {
namespace {

std::string trimmed(const std::string& base) {
  std::string out = base;
  while (!out.empty() && out.back() == '/') out.pop_back();
  return out;
}

}  // namespace

std::vector<std::string> annotation_tags(const FaultAnnotation& a) {
  std::vector<std::string> tags{"chaosbench", a.type};
  tags.insert(tags.end(), a.targets.begin(), a.targets.end());
  tags.push_back(a.run_id);
  return tags;
}

std::string annotation_text(const FaultAnnotation& a) {
  std::string text = fmt::format("fault {} ({}) #{}", a.fault, a.type, a.occurrence);
  if (!a.targets.empty()) text += fmt::format(" on {}", fmt::join(a.targets, ", "));
  return text + fmt::format(" \u2014 chaosbench run {}, scenario {}", a.run_id, a.scenario);
}

std::string annotations_url(const std::string& base) { return trimmed(base) + "/api/annotations"; }

std::string annotation_url(const std::string& base, std::int64_t id) {
  return fmt::format("{}/{}", annotations_url(base), id);
}

std::string url_for_messages(const std::string& url) {
  const auto scheme_end = url.find("://");
  const std::size_t start = scheme_end == std::string::npos ? 0 : scheme_end + 3;
  const std::size_t end = std::min(url.find_first_of("/?#", start), url.size());
  const auto at = std::string_view(url).substr(start, end - start).rfind('@');
  if (at == std::string_view::npos) return url;
  return url.substr(0, start) + "***" + url.substr(start + at);
}

std::string create_body(const FaultAnnotation& a, const std::string& dashboard_uid) {
  nlohmann::json j{{"time", a.start_ms}, {"timeEnd", a.end_ms}, {"tags", annotation_tags(a)}, {"text", annotation_text(a)}};
  if (!dashboard_uid.empty()) j["dashboardUID"] = dashboard_uid;
  return j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

std::string end_body(const FaultAnnotation& a) {
  return nlohmann::json{{"time", a.start_ms}, {"timeEnd", a.end_ms}}.dump();
}

std::optional<std::int64_t> created_id(const std::string& response_body) {
  const auto j = common::parse_json_bounded(response_body);  // Grafana's answer: not ours to trust
  if (!j.is_object()) return std::nullopt;
  const auto it = j.find("id");
  if (it == j.end() || !it->is_number_integer()) return std::nullopt;
  return it->get<std::int64_t>();
}

}  // namespace chaosbench::harness::grafana
