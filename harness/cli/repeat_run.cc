#include "harness/cli/repeat_run.h"

#include <iostream>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "common/files/trusted_directory.h"
#include "harness/core/exit_code.h"
#include "harness/core/host_error.h"
#include "harness/run/run_directory.h"
#include "reports/gate/repeat_combine.h"

namespace chaosbench::harness {
namespace {

// The reports of each run and of the baseline's combined result: no gate (the combined
// result is gated), no annotations, one line each (the combined summary follows).
ReportOptions part_reports(ReportOptions reports) {
  reports.baseline.reset();
  reports.annotations = false;
  reports.quiet = true;
  return reports;
}

// A series of runs of one scenario, into `dir`/run-NN/.
struct Side {
  const ScenarioSource* source = nullptr;
  std::string dir;
  std::vector<reports::RunToCombine> runs;
};

// One run of `side` (its number `i`, 1-based), reported into its own directory. Returns
// its exit code.
// `reports`: the options for a part of the series (part_reports), not the combined result's.
int run_one(Side& side, int i, int count, const RunOptions& run, const ReportOptions& reports) {
  RunOptions one = run;
  const std::string name = fmt::format("run-{:02d}", i);
  one.out_dir = side.dir + "/" + name;
  spdlog::info("{} run {}/{}: {}", side.source->scenario.name, i, count, one.out_dir);
  auto outcome = run_scenario(side.source->scenario, one);
  int code = finish_reports(outcome.result, outcome.run_dir, reports, outcome.source);
  side.runs.push_back({std::move(outcome.result), name});
  return code;
}

bool stops_series(int code) { return code == kExitInterrupted || code == kExitHost || code == kExitUsage; }

void make_directory(const std::string& dir) {
  if (std::string why = common::make_trusted_directory(dir, 0750); !why.empty())
    throw HostError(fmt::format("output directory: {}", why));
}

// The combined result's run id: its first run's (unique: a timestamp and a random part)
// with the count, so that a history (chaosbench history add) tells combined results
// apart whatever directory they were written to.
std::string combined_id(const Side& side) {
  return fmt::format("{}-x{}", side.runs.front().result.run_id, side.runs.size());
}

}  // namespace

int run_repeat(const ScenarioSource& current, const RepeatPlan& plan, const RunOptions& run,
               ReportOptions reports) {
  Side cur{&current, RunDirectory::resolve_out(run.out_dir, current.scenario.name), {}};
  make_directory(cur.dir);
  std::optional<Side> base;
  if (plan.interleave) {
    base = Side{&*plan.interleave, cur.dir + "/baseline", {}};
    make_directory(base->dir);
  }
  const ReportOptions each = part_reports(reports);
  for (int i = 1; i <= plan.count; ++i) {
    // ABBA: the baseline first in odd rounds, second in even ones.
    std::vector<Side*> order{&cur};
    if (base) order.insert(i % 2 == 1 ? order.begin() : order.end(), &*base);
    for (Side* side : order)
      if (int code = run_one(*side, i, plan.count, run, each); stops_series(code)) return code;
  }
  if (base) {
    auto combined = reports::combine_runs(base->runs, combined_id(*base), true);
    finish_reports(combined, base->dir, part_reports(reports), VerdictSource::kThisRun);
    reports.baseline = std::move(combined);
  }
  auto combined = reports::combine_runs(cur.runs, combined_id(cur), base.has_value());
  return finish_reports(combined, cur.dir, reports, VerdictSource::kThisRun);
}

}  // namespace chaosbench::harness
