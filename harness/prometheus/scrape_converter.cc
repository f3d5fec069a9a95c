// See scrape_converter.h: what each type becomes, and why.
#include "harness/prometheus/scrape_converter.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <optional>

#include "harness/exposition/bucket_quantile.h"
#include "harness/exposition/exposition_lexer.h"

namespace chaosbench::harness::prometheus {
namespace {

constexpr std::array<std::string_view, 3> kRunLabels{"phase", "rank", "instance"};
constexpr std::array<std::pair<std::string_view, double>, 3> kQuantiles{{{":p50", 0.5}, {":p90", 0.9}, {":p99", 0.99}}};

// A series' identity within one target: its name and its labels, sorted. Parsed names
// and values never hold a NUL byte, so NUL separates them unambiguously.
std::string series_key(std::string_view name, LabelPairs labels) {
  std::sort(labels.begin(), labels.end());
  std::string key(name);
  for (const auto& [k, v] : labels) {
    key += '\0';
    key += k;
    key += '\0';
    key += v;
  }
  return key;
}

// The unit a family's values are in: OpenMetrics' # UNIT, else the base unit its name
// ends in by Prometheus's naming convention ("_seconds", "_bytes").
std::string unit_of(const MetricFamily& f) {
  std::string_view name = f.name;
  if (name.ends_with("_total")) name.remove_suffix(6);
  std::string unit = f.unit;
  if (unit.empty()) {
    for (std::string_view u : {"seconds", "bytes", "percent", "celsius", "joules", "volts", "amperes", "watts"})
      if (name.size() > u.size() && name.ends_with(u) && name[name.size() - u.size() - 1] == '_') unit = u;
  }
  if (unit == "seconds") return "s";
  if (unit == "percent") return "%";
  if (unit == "celsius") return "C";
  return unit;
}

std::string rate_unit(const std::string& unit) { return unit.empty() ? "1/s" : unit + "/s"; }

LabelPairs without(const LabelPairs& labels, std::string_view name) {
  LabelPairs out;
  for (const auto& l : labels)
    if (l.first != name) out.push_back(l);
  return out;
}

// What one histogram or summary series (labels without le) holds in one scrape.
struct Group {
  LabelPairs labels;
  std::optional<double> sum, count;
  std::vector<std::pair<double, double>> buckets;  // (le, cumulative count)
};

}  // namespace

class ScrapeConverter::Pass {
 public:
  Pass(ScrapeConverter& c, double time) : c_(c), time_(time) {
    if (c.previous_time_ > 0 && time > c.previous_time_) dt_ = time - c.previous_time_;
  }
  void family(const MetricFamily& f);
  ConvertedScrape result;
  Previous next;

 private:
  bool admit();
  void emit(std::string name, const LabelPairs& labels, double value, const std::string& unit);
  std::optional<double> increase(const std::string& key, double value);
  std::optional<double> rate_of(const std::string& key, double value);
  const std::string* renamed(const MetricFamily& f, std::string_view sample_name) const;
  void groups(const MetricFamily& f);
  void group_samples(const MetricFamily& f, const std::string& base, const Group& g);

  ScrapeConverter& c_;
  double time_;
  std::optional<double> dt_;  // seconds since the previous successful scrape
};

bool ScrapeConverter::Pass::admit() {
  if (result.series >= c_.max_series_) {
    ++result.dropped_series;
    return false;
  }
  ++result.series;
  return true;
}

void ScrapeConverter::Pass::emit(std::string name, const LabelPairs& labels, double value, const std::string& unit) {
  if (!std::isfinite(value)) return;
  bench::Sample s;
  s.rank = -1;
  s.time = time_;
  s.name = std::move(name);
  s.value = value;
  s.unit = unit;
  for (const auto& [k, v] : labels) {
    const bool taken = std::find(kRunLabels.begin(), kRunLabels.end(), k) != kRunLabels.end();
    s.labels[taken ? "exported_" + k : k] = v;
  }
  s.labels["instance"] = c_.instance_;
  result.samples.push_back(std::move(s));
}

// How much a cumulative value grew since the previous scrape; nullopt on the first
// scrape, after a reset (it went down) or for NaN. Remembers `value` for the next one.
std::optional<double> ScrapeConverter::Pass::increase(const std::string& key, double value) {
  if (std::isnan(value)) return std::nullopt;
  next.values[key] = value;
  auto it = c_.previous_.values.find(key);
  if (it == c_.previous_.values.end() || value < it->second) return std::nullopt;
  return value - it->second;
}

std::optional<double> ScrapeConverter::Pass::rate_of(const std::string& key, double value) {
  auto inc = increase(key, value);
  if (!inc || !dt_) return std::nullopt;
  return *inc / *dt_;
}

const std::string* ScrapeConverter::Pass::renamed(const MetricFamily& f, std::string_view sample_name) const {
  if (auto it = c_.rename_.find(f.name); it != c_.rename_.end()) return &it->second;
  if (auto it = c_.rename_.find(std::string(sample_name)); it != c_.rename_.end()) return &it->second;
  return nullptr;
}

void ScrapeConverter::Pass::family(const MetricFamily& f) {
  if (!c_.filter_.matches(f)) return;
  const std::string unit = unit_of(f);
  if (f.type == MetricType::kHistogram || f.type == MetricType::kSummary) return groups(f);
  for (const auto& s : f.samples) {
    if (s.name.ends_with("_created") && s.name.size() > f.name.size()) continue;  // a start time, not a value
    if (f.type == MetricType::kGaugeHistogram && s.name.ends_with("_bucket")) continue;
    if (!admit()) continue;
    const std::string* to = renamed(f, s.name);
    if (f.type == MetricType::kGaugeHistogram && to) {
      emit(*to + s.name.substr(f.name.size()), s.labels, s.value, unit);
    } else if (f.type == MetricType::kCounter) {
      if (auto r = rate_of(series_key(s.name, s.labels), s.value)) emit(to ? *to : s.name + ":rate", s.labels, *r, rate_unit(unit));
    } else {
      emit(to ? *to : s.name, s.labels, s.value, unit);
    }
  }
}

// Histograms and summaries: samples grouped into series by their labels without le.
void ScrapeConverter::Pass::groups(const MetricFamily& f) {
  std::vector<Group> groups;
  std::unordered_map<std::string, std::size_t> index;
  const std::string* to = renamed(f, f.name);
  const std::string base = to ? *to : f.name;
  for (const auto& s : f.samples) {
    const std::string_view suffix = std::string_view(s.name).substr(f.name.size());
    if (suffix == "_created") continue;
    if (suffix.empty()) {  // a summary's quantile
      if (admit()) emit(base, s.labels, s.value, unit_of(f));
      continue;
    }
    LabelPairs labels = suffix == "_bucket" ? without(s.labels, "le") : s.labels;
    const std::string key = series_key(f.name, labels);
    auto [it, fresh] = index.try_emplace(key, groups.size());
    if (fresh) groups.push_back(Group{std::move(labels), {}, {}, {}});
    Group& g = groups[it->second];
    if (suffix == "_sum") g.sum = s.value;
    else if (suffix == "_count") g.count = s.value;
    else if (const std::string* le = find_label(s.labels, "le")) {
      // NaN has no order: one in a bucket would break the sorts below (undefined behaviour).
      const double bound = *detail::parse_float(*le);
      if (!std::isnan(bound) && !std::isnan(s.value)) g.buckets.emplace_back(bound, s.value);
    }
  }
  for (const auto& g : groups)
    if (admit()) group_samples(f, base, g);
}

void ScrapeConverter::Pass::group_samples(const MetricFamily& f, const std::string& base, const Group& g) {
  const std::string unit = unit_of(f);
  const std::string key = series_key(f.name, g.labels);
  std::optional<double> d_sum, d_count;
  if (g.sum) d_sum = increase(key + std::string(1, '\0') + "_sum", *g.sum);
  if (g.count) d_count = increase(key + std::string(1, '\0') + "_count", *g.count);
  if (dt_ && d_count) emit(base + "_count:rate", g.labels, *d_count / *dt_, "1/s");
  if (dt_ && d_sum) emit(base + "_sum:rate", g.labels, *d_sum / *dt_, rate_unit(unit));
  if (d_sum && d_count && *d_count > 0) emit(base + ":mean", g.labels, *d_sum / *d_count, unit);
  if (g.buckets.empty()) return;
  auto now = g.buckets;
  std::sort(now.begin(), now.end());
  next.buckets[key] = now;
  auto it = c_.previous_.buckets.find(key);
  if (it == c_.previous_.buckets.end() || it->second.size() != now.size()) return;
  std::vector<std::pair<double, double>> delta;
  for (std::size_t i = 0; i < now.size(); ++i) {
    const auto& [le, before] = it->second[i];
    if (le != now[i].first || now[i].second < before) return;  // other bounds, or a reset
    delta.emplace_back(le, now[i].second - before);
  }
  for (const auto& [suffix, q] : kQuantiles)
    if (auto v = bucket_quantile(q, delta)) emit(base + std::string(suffix), g.labels, *v, unit);
}

ScrapeConverter::ScrapeConverter(const ScrapeSpec& spec, std::string instance, std::size_t max_series)
    : filter_(spec.metrics), rename_(spec.rename), instance_(std::move(instance)), max_series_(max_series) {}

ConvertedScrape ScrapeConverter::convert(const std::vector<MetricFamily>& families, double time) {
  Pass pass(*this, time);
  for (const auto& f : families) pass.family(f);
  previous_ = std::move(pass.next);
  previous_time_ = time;
  return std::move(pass.result);
}

}  // namespace chaosbench::harness::prometheus
