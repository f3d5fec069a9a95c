#include "reports/diagnosis/diagnoser.h"

#include <algorithm>
#include <cmath>
#include <fmt/format.h>

#include "common/values/percentile.h"

namespace chaosbench::reports {
namespace {

constexpr std::size_t kRecent = 4;  // a verdict is named once it held in kToName of these
constexpr int kToName = 3;
constexpr std::int64_t kMaxRank = 1 << 20;
// Windows an empty stretch keeps before the engine jumps over it: a rank's carried
// compute time and an episode's lapse play out in them.
constexpr std::int64_t kSkipSlack = 8;

std::optional<int> rank_of(const Labels& labels) {
  auto it = labels.find("rank");
  if (it == labels.end()) return std::nullopt;
  double r = NAN;
  if (const auto* i = std::get_if<std::int64_t>(&it->second)) r = static_cast<double>(*i);
  if (const auto* d = std::get_if<double>(&it->second)) r = *d;
  if (!(r >= 0 && r < static_cast<double>(kMaxRank))) return std::nullopt;
  return static_cast<int>(r);
}

std::string text_of(const Labels& labels, const std::string& key) {
  auto it = labels.find(key);
  return it == labels.end() ? std::string() : label_to_string(it->second);
}

// The mesh's window, as its samples are spaced: the median gap of net/pair_rtt samples
// (1 s when there are none).
double mesh_window(const std::vector<Series>& series) {
  std::vector<double> gaps;
  for (const auto& s : series) {
    if (s.name != "net/pair_rtt") continue;
    for (std::size_t i = 1; i < s.t.size() && gaps.size() < 10000; ++i)
      if (std::isfinite(s.t[i] - s.t[i - 1]) && s.t[i] > s.t[i - 1]) gaps.push_back(s.t[i] - s.t[i - 1]);
  }
  if (gaps.empty()) return 1.0;
  return std::clamp(std::round(common::median(gaps) * 1000) / 1000, 0.2, 60.0);
}

}  // namespace

// How long it held (8 windows: full marks) and by how much it cleared its threshold
// (twice: full marks), each half.
double Diagnoser::confidence(const Episode& e) {
  const double persistence = std::min(1.0, e.held / 8.0);
  const double margin = std::clamp(0.5 + std::log2(std::max(1.0, e.best_strength)) / 2, 0.5, 1.0);
  return std::min(0.99, 0.5 * persistence + 0.5 * margin);
}

Diagnoser::Diagnoser(double window_s, double lag_s)
    : window_s_(std::isfinite(window_s) && window_s > 0 ? window_s : 1.0), lag_s_(lag_s) {}

bool Diagnoser::reads(const std::string& name) {
  return name == "net/pair_rtt" || name == "net/pair_loss" || name == "train/compute_time" || name == "node/cpu_wait" ||
         name == "node/cpu_usage";
}

void Diagnoser::set_rank_node(int rank, const std::string& node) { rank_node_[rank] = node; }

void Diagnoser::add(const std::string& name, const Labels& labels, double t, double value) {
  if (!std::isfinite(t) || std::fabs(t) > kMaxTimeS || !std::isfinite(value)) return;
  const auto w = static_cast<std::int64_t>(std::floor(t / window_s_));
  if (next_ && w < *next_) return;
  Track* track = nullptr;
  if (name == "net/pair_rtt" || name == "net/pair_loss") {
    auto key = std::make_pair(text_of(labels, "src"), text_of(labels, "dst"));
    if (key.first.empty() || key.second.empty() || key.first == key.second) return;
    track = &(name == "net/pair_rtt" ? rtt_ : loss_)[key];
    inputs_.insert("link mesh");
  } else if (name == "train/compute_time") {
    auto rank = rank_of(labels);
    if (!rank) return;
    track = &compute_[*rank];
    inputs_.insert("rank compute");
  } else if (name == "node/cpu_wait" || name == "node/cpu_usage") {
    auto node = text_of(labels, "node");
    if (node.empty()) return;
    track = &(name == "node/cpu_wait" ? wait_ : usage_)[node];
    inputs_.insert("node telemetry");
  }
  if (track) track->pending[w].push_back(value);
}

std::optional<std::int64_t> Diagnoser::first_pending() const {
  std::optional<std::int64_t> first;
  auto scan = [&](const auto& tracks) {
    for (const auto& [key, t] : tracks)
      if (!t.pending.empty()) first = std::min(first.value_or(t.pending.begin()->first), t.pending.begin()->first);
  };
  scan(rtt_), scan(loss_), scan(compute_), scan(wait_), scan(usage_);
  return first;
}

std::vector<DiagnosisCulprit> Diagnoser::advance(double now) {
  std::vector<DiagnosisCulprit> named;
  if (!std::isfinite(now)) return named;
  const auto last = static_cast<std::int64_t>(std::floor((std::clamp(now, -kMaxTimeS, kMaxTimeS) - lag_s_) / window_s_)) - 1;
  while (true) {
    // Over a stretch without samples the engine jumps, keeping a few windows of slack.
    const auto first = first_pending();
    if (!next_) {
      if (!first) return named;
      next_ = *first;
    }
    if (*next_ > last) return named;
    if (!first) {
      next_ = std::max(*next_, last + 1 - kSkipSlack);
    } else if (*first > *next_ + kSkipSlack) {
      next_ = *first - kSkipSlack;
    }
    if (*next_ > last) return named;
    for (auto& c : judge(*next_)) named.push_back(std::move(c));
    ++*next_;
  }
}

// This window's value of a series: the median of its samples; with none, its last value
// for up to `carry_max` windows.
std::optional<double> Diagnoser::take(Track& t, std::int64_t w, int carry_max) {
  while (!t.pending.empty() && t.pending.begin()->first < w) t.pending.erase(t.pending.begin());
  if (!t.pending.empty() && t.pending.begin()->first == w) {
    t.last = common::median(std::move(t.pending.begin()->second));
    t.pending.erase(t.pending.begin());
    t.carried = 0;
    return t.last;
  }
  if (t.last && t.carried < carry_max) {
    ++t.carried;
    return t.last;
  }
  return std::nullopt;
}

std::vector<DiagnosisCulprit> Diagnoser::judge(std::int64_t w) {
  ++judged_;
  std::vector<Verdict> verdicts = judge_links(w);
  for (auto& v : judge_ranks(w)) verdicts.push_back(std::move(v));
  std::vector<DiagnosisCulprit> named;
  track_episodes(verdicts, w, named);
  return named;
}

void Diagnoser::track_episodes(const std::vector<Verdict>& verdicts, std::int64_t w,
                               std::vector<DiagnosisCulprit>& named) {
  std::map<std::string, const Verdict*> held;
  for (const auto& v : verdicts) {
    auto [it, fresh] = held.emplace(v.cls + ":" + v.component, &v);
    if (!fresh && v.strength > it->second->strength) it->second = &v;
  }
  const double start = static_cast<double>(w) * window_s_, end = start + window_s_;
  for (const auto& [key, v] : held) {
    auto [it, fresh] = episodes_.try_emplace(key);
    Episode& e = it->second;
    if (fresh) e.culprit = {v->cls, v->component, v->what, start, end, 0, 0, {}};
    e.culprit.end_s = end;
    ++e.held;
    if (v->strength > e.best_strength) {
      e.best_strength = v->strength;
      e.culprit.evidence = v->evidence;
      e.culprit.what = v->what;
    }
  }
  for (auto it = episodes_.begin(); it != episodes_.end();) {
    Episode& e = it->second;
    // A window in which no rank finished a step neither holds nor lapses a rank's verdict.
    const bool rank_class = e.culprit.cls == "node" || e.culprit.cls == "gpu";
    if (!rank_class || ranks_judged_) {
      e.recent.push_back(held.count(it->first) > 0);
      if (e.recent.size() > kRecent) e.recent.pop_front();
    }
    const auto holds = std::count(e.recent.begin(), e.recent.end(), true);
    if (!e.named && holds >= kToName) {
      e.named = true;
      e.culprit.first_named_s = end + lag_s_;
      named.push_back(e.culprit);
      named.back().confidence = confidence(e);
    }
    if (e.recent.size() == kRecent && holds == 0) {  // lapsed: the episode is over
      if (e.named) {
        closed_.push_back(e.culprit);
        closed_.back().confidence = confidence(e);
      }
      it = episodes_.erase(it);
    } else {
      ++it;
    }
  }
}

Diagnosis Diagnoser::result() const {
  Diagnosis d;
  d.window_s = window_s_;
  d.windows = static_cast<int>(judged_);
  d.inputs.assign(inputs_.begin(), inputs_.end());
  d.culprits = closed_;
  for (const auto& [key, e] : episodes_) {
    if (!e.named) continue;
    d.culprits.push_back(e.culprit);
    d.culprits.back().confidence = confidence(e);
  }
  std::stable_sort(d.culprits.begin(), d.culprits.end(), [](const auto& a, const auto& b) {
    if (a.confidence != b.confidence) return a.confidence > b.confidence;
    return a.first_named_s < b.first_named_s;
  });
  if (!inputs_.count("link mesh")) d.notes.push_back("no link mesh samples (net/pair_rtt): links and NICs not judged");
  if (!inputs_.count("rank compute")) d.notes.push_back("no per-rank compute times (train/compute_time): stragglers not judged");
  if (!inputs_.count("node telemetry"))
    d.notes.push_back("no node telemetry (node/cpu_wait): a straggler's node and device not told apart");
  for (const auto& n : notes_) d.notes.push_back(n);
  return d;
}

Diagnosis diagnose_series(const std::vector<Series>& series, const std::vector<ProcessRecord>& processes,
                          double window_s) {
  if (!(window_s > 0)) window_s = mesh_window(series);
  Diagnoser d(window_s);
  for (const auto& p : processes) {
    if (p.role != "rank" || p.node.empty()) continue;
    const bool digits = std::all_of(p.node.begin(), p.node.end(), [](char c) { return c >= '0' && c <= '9'; });
    d.set_rank_node(p.rank, digits ? "node" + p.node : p.node);
  }
  struct Point {
    double t;
    const Series* s;
    double v;
  };
  std::vector<Point> points;
  for (const auto& s : series) {
    if (!Diagnoser::reads(s.name)) continue;
    for (std::size_t i = 0; i < s.t.size() && i < s.v.size(); ++i)
      if (std::isfinite(s.t[i]) && std::fabs(s.t[i]) <= Diagnoser::kMaxTimeS) points.push_back({s.t[i], &s, s.v[i]});
  }
  std::stable_sort(points.begin(), points.end(), [](const Point& a, const Point& b) { return a.t < b.t; });
  // Fed a window at a time, as live: what the engine judges at time T is what had come.
  // Over a gap between samples the clock jumps to the next one.
  std::size_t i = 0;
  for (double now = points.empty() ? 0 : std::floor(points.front().t / window_s) * window_s + window_s;
       i < points.size(); now += window_s) {
    now = std::max(now, std::floor(points[i].t / window_s) * window_s + window_s);
    for (; i < points.size() && points[i].t < now; ++i) d.add(points[i].s->name, points[i].s->labels, points[i].t, points[i].v);
    d.advance(now);
  }
  if (!points.empty()) d.advance(points.back().t + window_s + 10);
  return d.result();
}

}  // namespace chaosbench::reports
