#include "reports/render/trace_report.h"

#include <charconv>
#include <cmath>
#include <fmt/format.h>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>

#include "reports/model/probe_spans.h"
#include "reports/model/text_format.h"

namespace chaosbench::reports {
namespace {

using nlohmann::json;

// Process ids of the track groups; thread 0 of kRanks is the harness (rank -1), rank r
// is thread r + 1; thread 0 of kProbes is the abort, probe i is thread i + 1.
constexpr int kRanks = 1;
constexpr int kFaults = 2;
constexpr int kProbes = 3;

int rank_tid(int rank) { return rank < 0 ? 0 : rank + 1; }

// Seconds to trace microseconds, kept to the nanosecond so the text stays short.
double us(double seconds) { return std::round(seconds * 1e9) / 1e3; }

std::optional<int> rank_of(const Labels& labels) {
  std::string text = label_value(labels, "rank");
  int rank = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), rank);
  if (text.empty() || ec != std::errc() || end != text.data() + text.size()) return std::nullopt;
  return rank;
}

json label_json(const LabelValue& v) {
  return std::visit([](const auto& x) { return json(x); }, v);
}

json metadata(const char* what, int pid, std::optional<int> tid, const json& args) {
  json e = {{"ph", "M"}, {"name", what}, {"pid", pid}, {"args", args}};
  if (tid) e["tid"] = *tid;
  return e;
}

json complete(const std::string& name, const char* cat, int pid, int tid, double start_s, double length_s) {
  return {{"ph", "X"}, {"name", name}, {"cat", cat}, {"pid", pid}, {"tid", tid}, {"ts", us(start_s)},
          {"dur", us(std::max(0.0, length_s))}};
}

// Invalid UTF-8 in a name becomes U+FFFD instead of an exception.
std::string dumped(const json& e) { return e.dump(-1, ' ', false, json::error_handler_t::replace); }

// The trace, one event per line (valid JSON that still diffs well), built in one buffer:
// steps and iterations are most of a trace (10^6 samples make 3·10^6 events), too many
// to build a json object or a string each. Times in whole microseconds.
class TraceText {
 public:
  TraceText() { out_ = "{\"displayTimeUnit\":\"ms\",\"traceEvents\":[\n"; }
  void add(std::string_view event) {
    separate();
    out_ += event;
  }
  // A complete event written directly; `quoted_name` is already a JSON string. Keys in
  // the order nlohmann writes them.
  void complete(std::string_view quoted_name, const char* cat, int tid, double start_s, double length_s) {
    separate();
    fmt::format_to(std::back_inserter(out_), R"({{"cat":"{}","dur":{},"name":{},"ph":"X","pid":{},"tid":{},"ts":{}}})",
                   cat, std::llround(us(std::max(0.0, length_s))), quoted_name, kRanks, tid, std::llround(us(start_s)));
  }
  std::string finish() {
    out_ += "\n]}\n";
    return std::move(out_);
  }

 private:
  void separate() {
    if (!first_) out_ += ",\n";
    first_ = false;
  }
  std::string out_;
  bool first_ = true;
};

struct RankSeries {
  const Series* step = nullptr;
  const Series* compute = nullptr;
  const Series* comm = nullptr;
  std::vector<const Series*> latency;  // collective benchmark: one per collective and size
};

// Steps of one rank: "step N" over [t − step_time, t], with "compute" from the step's
// start and "comm (exposed)" up to its end nested in it. N restarts from a train_start's
// step (a restored or rejoining rank), else counts from 1.
void add_steps(TraceText& out, const RunResult& run, int rank, const RankSeries& s) {
  std::vector<std::pair<double, double>> starts;  // (t, step) of this rank's train_start events
  for (const auto& e : run.events)
    if (e.rank == rank && e.name == "train_start")
      if (auto step = label_number(e.fields, "step")) starts.emplace_back(e.t, *step);
  std::size_t next_start = 0;
  double step_number = 1;
  int tid = rank_tid(rank);
  for (std::size_t i = 0; i < s.step->t.size() && i < s.step->v.size(); ++i) {
    double end = s.step->t[i], length = s.step->v[i] / 1000, start = end - length;
    while (next_start < starts.size() && starts[next_start].first <= end) step_number = starts[next_start++].second + 1;
    char name[32];
    const auto n = fmt::format_to_n(name, sizeof(name), "\"step {:.0f}\"", step_number++).size;
    out.complete(std::string_view(name, std::min(n, sizeof(name))), "step", tid, start, length);
    double compute = 0;
    if (s.compute && i < s.compute->v.size()) {
      compute = std::min(length, s.compute->v[i] / 1000);
      out.complete("\"compute\"", "compute", tid, start, compute);
    }
    if (s.comm && i < s.comm->v.size()) {
      // Siblings must not overlap for the viewer to nest them: the exposed part is at most
      // what the compute part left of the step.
      double comm = std::min(length - compute, s.comm->v[i] / 1000);
      out.complete("\"comm (exposed)\"", "comm", tid, end - comm, comm);
    }
  }
}

// Collective benchmark: each iteration as long as its latency, centred on its sample time.
void add_iterations(TraceText& out, int rank, const Series& s) {
  std::string name = fmt::format("{} {}", label_value(s.labels, "collective"), label_value(s.labels, "algorithm"));
  if (auto bytes = label_number(s.labels, "bytes")) name += fmt::format(" {}", format_bytes(*bytes));
  std::string quoted = dumped(name);
  for (std::size_t i = 0; i < s.t.size() && i < s.v.size(); ++i) {
    double length = s.v[i] / 1e6;
    out.complete(quoted, "comm", rank_tid(rank), s.t[i] - length / 2, length);
  }
}

// "train_start (recovered)", "checkpoint_saved step 50": the field that tells events apart.
std::string instant_name(const EventRecord& e) {
  for (const char* key : {"reason", "kind"})
    if (auto it = e.fields.find(key); it != e.fields.end()) return fmt::format("{} ({})", e.name, label_to_string(it->second));
  return e.name;
}

// The probes' track: per probe, one span per stretch of one outcome ("pass" / "FAIL",
// with the evidence as args); then the abort as a global instant where it was decided and
// a "reverting faults" span up to every fault reverted (its length is fault/abort_latency).
void add_probes(TraceText& out, const RunResult& run) {
  if (run.probes.empty() && !run.abort) return;
  out.add(dumped(metadata("process_name", kProbes, std::nullopt, {{"name", "probes"}})));
  out.add(dumped(metadata("process_sort_index", kProbes, std::nullopt, {{"sort_index", 2}})));
  for (std::size_t i = 0; i < run.probes.size(); ++i) {
    const auto& p = run.probes[i];
    const int tid = int(i) + 1;
    out.add(dumped(metadata("thread_name", kProbes, tid, {{"name", p.name}})));
    for (const auto& span : probe_spans(p, run.duration_s)) {
      json e = complete(span.ok ? "pass" : "FAIL", "probe", kProbes, tid, span.start_s, span.end_s - span.start_s);
      e["args"] = {{"kind", p.kind}, {"mode", p.mode}, {"evidence", span.evidence}};
      if (span.value) e["args"]["value"] = *span.value;
      out.add(dumped(e));
    }
  }
  if (!run.abort) return;
  const auto& a = *run.abort;
  out.add(dumped(metadata("thread_name", kProbes, 0, {{"name", "abort"}})));
  out.add(dumped({{"ph", "i"}, {"name", fmt::format("abort ({})", a.cause)}, {"cat", "abort"}, {"s", "g"}, {"pid", kProbes},
                  {"tid", 0}, {"ts", us(a.decided_s)}, {"args", {{"cause", a.cause}, {"evidence", a.evidence}}}}));
  if (a.reverted_s)
    out.add(dumped(complete("reverting faults", "abort", kProbes, 0, a.decided_s, *a.reverted_s - a.decided_s)));
}

}  // namespace

std::string render_trace(const RunResult& run) {
  std::map<int, RankSeries> ranks;
  for (const auto& s : run.series) {
    auto rank = rank_of(s.labels);
    if (!rank) continue;
    if (s.name == "train/step_time") ranks[*rank].step = &s;
    else if (s.name == "train/compute_time") ranks[*rank].compute = &s;
    else if (s.name == "train/comm_time") ranks[*rank].comm = &s;
    else if (s.name == "comm/latency") ranks[*rank].latency.push_back(&s);
  }
  bool harness = false;
  for (const auto& e : run.events) {
    if (e.rank >= 0) ranks.try_emplace(e.rank);
    harness |= e.rank < 0;
  }

  TraceText events;
  events.add(dumped(metadata("process_name", kRanks, std::nullopt, {{"name", "ranks"}})));
  events.add(dumped(metadata("process_sort_index", kRanks, std::nullopt, {{"sort_index", 0}})));
  if (harness) events.add(dumped(metadata("thread_name", kRanks, rank_tid(-1), {{"name", "harness"}})));
  for (const auto& [rank, s] : ranks)
    events.add(dumped(metadata("thread_name", kRanks, rank_tid(rank), {{"name", fmt::format("rank {}", rank)}})));
  if (!run.faults.empty()) {
    events.add(dumped(metadata("process_name", kFaults, std::nullopt, {{"name", "faults"}})));
    events.add(dumped(metadata("process_sort_index", kFaults, std::nullopt, {{"sort_index", 1}})));
  }
  for (std::size_t i = 0; i < run.faults.size(); ++i) {
    const auto& f = run.faults[i];
    std::string name = f.occurrence > 1 ? fmt::format("{} #{}", f.name, f.occurrence) : f.name;
    int tid = int(i) + 1;
    events.add(dumped(metadata("thread_name", kFaults, tid, {{"name", name}})));
    if (!f.applied_at_s) continue;
    double end = f.reverted_at_s.value_or(run.duration_s);
    json e = complete(fmt::format("{} ({})", name, f.type), "fault", kFaults, tid, *f.applied_at_s, end - *f.applied_at_s);
    e["args"] = {{"type", f.type}, {"targets", f.targets}, {"backend", f.backend}, {"reverted", f.reverted_at_s.has_value()}};
    if (!f.error.empty()) e["args"]["error"] = f.error;
    events.add(dumped(e));
  }
  add_probes(events, run);
  for (const auto& [rank, s] : ranks) {
    if (s.step) add_steps(events, run, rank, s);
    for (const auto* latency : s.latency) add_iterations(events, rank, *latency);
  }
  for (const auto& e : run.events) {
    json args = json::object();
    for (const auto& [key, value] : e.fields) args[key] = label_json(value);
    // Rank events mark their rank's track; the harness's mark the whole timeline.
    events.add(dumped({{"ph", "i"}, {"name", instant_name(e)}, {"cat", "event"}, {"s", e.rank < 0 ? "g" : "t"},
                             {"pid", kRanks}, {"tid", rank_tid(e.rank)}, {"ts", us(e.t)}, {"args", std::move(args)}}));
  }

  return events.finish();
}

}  // namespace chaosbench::reports
