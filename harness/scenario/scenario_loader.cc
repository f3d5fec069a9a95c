#include "harness/scenario/scenario_loader.h"

#include <fmt/format.h>
#include <ranges>
#include <fstream>
#include <sys/stat.h>

#include "common/files/safe_files.h"
#include "faults/registry/registry.h"
#include "harness/scenario/scenario_parts.h"

namespace chaosbench::harness {
namespace {

[[noreturn]] void fail(const std::string& file, int line, int column, std::string message) {
  throw ScenarioError({Diagnostic{file, line, column, "", "", std::move(message)}});
}

// nlohmann's messages start with "[json.exception.parse_error.101] parse error at line 1,
// column 5: "; the position is ours (characters, not bytes), so keep only the reason.
std::string parse_reason(const std::string& what) {
  auto colon = what.find(": ");
  std::string reason = colon == std::string::npos ? what : what.substr(colon + 2);
  return "invalid JSON: " + reason;
}

// A check's phase must be one the run can have: baseline, overall, or the fault or
// recovery window of a fault the scenario names.
void check_phases(ParseContext& ctx, const Scenario& s) {
  for (std::size_t i = 0; i < s.checks.size(); ++i) {
    const auto& phase = s.checks[i].phase;
    if (phase == "baseline" || phase == "overall") continue;
    std::string name;
    if (phase.starts_with("fault:")) name = phase.substr(6);
    else if (phase.starts_with("recovery:")) name = phase.substr(9);
    else {
      ctx.error(join_path(join_path("checks", i), "phase"),
                fmt::format("expected \"baseline\", \"overall\", \"fault:NAME\" or \"recovery:NAME\", got \"{}\"", phase));
      continue;
    }
    bool known = false;
    for (const auto& f : s.faults) known = known || f.name == name;
    if (!known)
      ctx.error(join_path(join_path("checks", i), "phase"), fmt::format("no fault is named \"{}\"", name));
  }
}

// A fault acted out inside the workload (GPU and collective faults) needs a workload
// kind that acts it out: the registry lists them.
void check_fault_workloads(ParseContext& ctx, const Scenario& s) {
  const std::string kind(workload_kind(s.workload));
  const bool hangs = has_fault_with(s, faults::kHangs);
  // The trainer's step watchdog (on with recovery when hangs are injected) must not fire
  // on a healthy rank that waits out a peer's collective timeout.
  if (const auto* t = std::get_if<TrainWorkload>(&s.workload);
      t && hangs && t->recovery.mode != RecoveryMode::kNone && t->recovery.hang_timeout.value <= t->timeout.value)
    ctx.error("workload.recovery.hang_timeout",
              fmt::format("must be longer than workload.timeout ({}) when hangs are injected: the step watchdog "
                          "would end ranks that are waiting for a hung peer",
                          common::to_string(t->timeout)));
  for (std::size_t i = 0; i < s.faults.size(); ++i) {
    const auto* info = faults::find_fault_type(s.faults[i].type);
    if (!info || info->workloads.empty()) continue;
    bool ok = false;
    for (auto part : std::views::split(info->workloads, std::string_view(", ")))
      ok = ok || std::string_view(part.begin(), part.end()) == kind;
    if (!ok)
      ctx.error(join_path(join_path("faults", i), "type"),
                fmt::format("{} is acted out by {} workloads; this workload is {}", info->type, info->workloads, kind));
    // A replica answers errors under gpu.oom and queues under gpu.hang, but lives on
    // (kServeReplicaLives): there is no ended process to start again.
    const auto* llm = std::get_if<LlmWorkload>(&s.workload);
    if (llm && llm->engine == "synthetic" && info->type.starts_with("gpu."))
      ctx.error(join_path(join_path("faults", i), "type"),
                fmt::format("{} acts through the engine's device; the synthetic engine has none: use engine transformer",
                            info->type));
    if ((kind == "serve" || kind == "llm") && (info->traits & faults::kServeReplicaLives) != 0 &&
        s.faults[i].restart_after)
      ctx.error(join_path(join_path("faults", i), "restart_after"),
                fmt::format("{} does not end a {} replica, so there is nothing to restart (gpu.xid does)", info->type, kind));
  }
}

std::vector<SweepAxis> parse_sweep(ParseContext& ctx, const json& value) {
  std::vector<SweepAxis> axes;
  if (!value.is_object() || value.empty()) {
    ctx.error("sweep", fmt::format("expected an object of setting paths to arrays of values, such as "
                                   "{{\"workload.batch_size\": [512, 1024]}}, got {}", describe(value)));
    return axes;
  }
  std::size_t points = 1;
  for (const auto& [key, values] : value.items()) {
    const std::string path = join_path("sweep", key);
    if (key.empty() || key.rfind("sweep", 0) == 0 || key.find('=') != std::string::npos) {
      ctx.error(path, "expected a setting path such as \"workload.batch_size\"", true);
      continue;
    }
    if (!values.is_array() || values.empty()) {
      ctx.error(path, fmt::format("expected a non-empty array of values, got {}", describe(values)));
      continue;
    }
    SweepAxis axis{key, {}};
    for (const auto& v : values) axis.values.push_back(v.dump());
    points *= values.size();
    axes.push_back(std::move(axis));
  }
  if (points > kMaxSweepPoints)
    ctx.error("sweep", fmt::format("the grid has {} points; a sweep runs at most {}", points, kMaxSweepPoints));
  return axes;
}

}  // namespace

bool valid_name(const std::string& s) {
  if (s.empty() || s.size() > 64) return false;
  auto alnum = [](char c) { return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9'); };
  if (!alnum(s[0])) return false;
  for (char c : s)
    if (!alnum(c) && c != '.' && c != '_' && c != '-') return false;
  return true;
}

namespace {


// Every point of a sweep must be a valid scenario too, found now rather than halfway
// through the sweep. The points are checked without their own sweep.
void check_sweep_points(ParseContext& ctx, const Scenario& s, std::string_view text, const std::string& file,
                        const LoadOptions& options) {
  const auto points = sweep_points(s.sweep);
  for (std::size_t i = 0; i < points.size(); ++i) {
    LoadOptions point = options;
    point.no_sweep = true;
    point.overrides.insert(point.overrides.end(), points[i].overrides.begin(), points[i].overrides.end());
    try {
      parse_scenario(text, file, point);
    } catch (const ScenarioError& e) {
      const auto& first = e.diagnostics().front();
      ctx.error("sweep", fmt::format("point {} ({}) is not a valid scenario: {}: {}", i + 1, points[i].label,
                                     first.path, first.message));
    }
  }
}

}  // namespace

// The document, or a ScenarioError at the line and column where the text stops being a
// scenario's JSON (too large, too deep, a syntax error, a number out of range).
json parse_document(std::string_view text, const std::string& file) {
  if (text.size() > kMaxScenarioBytes)
    fail(file, 0, 0, fmt::format("the file is {} bytes; scenario files are at most {} bytes", text.size(), kMaxScenarioBytes));
  if (auto deep = find_nesting_over(text, kMaxScenarioDepth)) {
    auto pos = position_of(text, *deep);
    fail(file, pos.line, pos.column, fmt::format("nesting deeper than {} levels; a scenario needs a handful", kMaxScenarioDepth));
  }
  try {
    return json::parse(text.begin(), text.end());
  } catch (const json::parse_error& e) {
    // e.byte is 1-based: the offset just past the character where parsing stopped.
    std::size_t offset = e.byte > 0 ? e.byte - 1 : 0;
    auto pos = position_of(text, offset);
    fail(file, pos.line, pos.column, parse_reason(e.what()));
  } catch (const json::exception& e) {
    // A number too large for a double ("1e400") carries no position: find the token.
    std::string what = e.what();
    auto q1 = what.find('\''), q2 = what.rfind('\'');
    int line = 0, column = 0;
    if (q1 != std::string::npos && q2 > q1) {
      auto at = text.find(std::string_view(what).substr(q1 + 1, q2 - q1 - 1));
      if (at != std::string_view::npos) {
        auto pos = position_of(text, at);
        line = pos.line;
        column = pos.column;
      }
    }
    fail(file, line, column, parse_reason(what));
  }
}

LoadResult parse_scenario(std::string_view text, const std::string& file, const LoadOptions& options) {
  json doc = parse_document(text, file);
  auto overrides = apply_overrides(doc, options.overrides, file);
  ParseContext ctx(file, text, overrides);

  LoadResult result;
  Scenario& s = result.scenario;
  s.source_path = file;
  ObjectReader top(ctx, doc, "",
                   {"schema_version", "name", "description", "seed", "timeout", "cluster", "workload", "faults", "checks", "scrape",
                    "sweep", "probes", "abort", "mesh"});
  if (!top.ok()) throw ScenarioError(ctx.take());
  top.require("schema_version", "the format version, 1");
  top.require("name", "a short name such as \"collective-sweep\"");
  top.require("workload", "what to run: an object with \"kind\"");
  if (const json* v = top.raw("schema_version")) {
    if (v->is_number_integer() && v->get<std::int64_t>() != 1)
      ctx.error("schema_version", fmt::format("unsupported schema_version {} (this chaosbench reads 1)", v->dump()));
    else if (auto n = top.integer("schema_version", 1, 1)) s.schema_version = static_cast<int>(*n);
  }
  if (auto v = top.string("name")) {
    if (!valid_name(*v))
      ctx.error("name", fmt::format("expected 1 to 64 of a-z 0-9 . _ -, starting with a letter or digit; got \"{}\"", *v));
    s.name = *v;
  }
  if (auto v = top.string("description")) s.description = *v;
  if (auto v = top.integer("seed", 0, INT64_MAX)) s.seed = static_cast<std::uint64_t>(*v);
  if (options.seed) s.seed = *options.seed;
  if (auto v = top.duration("timeout", /*allow_zero=*/false)) s.timeout = *v;
  s.cluster = parse_cluster(ctx, top.raw("cluster"), file);
  const json* workload = top.raw("workload");
  if (workload) s.workload = parse_workload(ctx, *workload, s.cluster);
  if (const json* f = top.raw("faults")) s.faults = parse_faults(ctx, *f, s.cluster, workload ? &s.workload : nullptr);
  if (const json* c = top.raw("checks")) s.checks = parse_checks(ctx, *c);
  if (const json* sc = top.raw("scrape")) s.scrape = parse_scrapes(ctx, *sc, s.cluster);
  if (const json* m = top.raw("mesh")) s.mesh = parse_mesh(ctx, *m);
  if (const json* p = top.raw("probes")) s.probes = parse_probes(ctx, *p, s.cluster, s.faults);
  if (const json* a = top.raw("abort")) s.abort = parse_abort(ctx, *a, s.probes);
  check_phases(ctx, s);
  check_fault_workloads(ctx, s);
  if (const json* sw = top.raw("sweep")) s.sweep = parse_sweep(ctx, *sw);
  if (!s.sweep.empty() && !ctx.failed() && !options.no_sweep) check_sweep_points(ctx, s, text, file, options);

  if (ctx.failed()) throw ScenarioError(ctx.take());
  for (auto& d : ctx.take()) result.warnings.push_back(std::move(d));
  s.resolved_json = doc.dump();
  return result;
}

std::string read_scenario_file(const std::string& file) {
  struct stat st {};
  if (::stat(file.c_str(), &st) != 0) fail(file, 0, 0, "cannot read the file: it does not exist");
  if (S_ISDIR(st.st_mode)) fail(file, 0, 0, "is a directory, not a scenario file");
  if (!S_ISREG(st.st_mode) && !S_ISFIFO(st.st_mode))
    fail(file, 0, 0, "is neither a regular file nor a pipe (a device is never read)");
  if (S_ISREG(st.st_mode) && static_cast<std::size_t>(st.st_size) > kMaxScenarioBytes)
    fail(file, 0, 0, fmt::format("the file is {} bytes; scenario files are at most {} bytes",
                                 static_cast<long long>(st.st_size), kMaxScenarioBytes));
  std::string text;
  if (std::string error = common::read_named_file(file, text, kMaxScenarioBytes); !error.empty())
    fail(file, 0, 0, error);
  return text;
}

LoadResult load_scenario(const std::string& file, const LoadOptions& options) {
  return parse_scenario(read_scenario_file(file), file, options);
}

}  // namespace chaosbench::harness
