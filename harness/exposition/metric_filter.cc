// See metric_filter.h.
#include "harness/exposition/metric_filter.h"

#include <algorithm>

namespace chaosbench::harness::prometheus {
namespace {

std::regex compile(const std::string& entry) {
  return std::regex(entry.substr(1, entry.size() - 2), std::regex::ECMAScript | std::regex::optimize);
}

}  // namespace

MetricFilter::MetricFilter(const std::vector<std::string>& entries) {
  for (const auto& e : entries) {
    if (is_regex(e)) patterns_.push_back(compile(e));
    else names_.push_back(e);
  }
}

bool MetricFilter::is_regex(std::string_view entry) {
  return entry.size() >= 3 && entry.front() == '/' && entry.back() == '/';
}

std::optional<std::string> MetricFilter::regex_problem(const std::string& entry) {
  if (!is_regex(entry)) return std::nullopt;
  try {
    (void)compile(entry);
  } catch (const std::regex_error& e) {
    return std::string(e.what());
  }
  return std::nullopt;
}

bool MetricFilter::matches(std::string_view name) const {
  if (keeps_everything()) return true;
  if (std::find(names_.begin(), names_.end(), name) != names_.end()) return true;
  if (name.size() > kMaxRegexSubject) return false;
  for (const auto& re : patterns_)
    if (std::regex_match(name.begin(), name.end(), re)) return true;
  return false;
}

bool MetricFilter::matches(const MetricFamily& family) const {
  if (matches(family.name)) return true;
  // Few distinct sample names per family (a histogram has four): test each once.
  std::vector<std::string_view> tried;
  for (const auto& s : family.samples) {
    if (std::find(tried.begin(), tried.end(), s.name) != tried.end()) continue;
    if (matches(s.name)) return true;
    tried.push_back(s.name);
  }
  return false;
}

}  // namespace chaosbench::harness::prometheus
