// chaosbench run SCENARIO.json — the main job.
#include <algorithm>
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <iostream>

#include <nlohmann/json.hpp>

#include "common/values/units.h"
#include "harness/cli/cli_options.h"
#include "harness/core/exit_code.h"
#include "harness/http/http_client.h"
#include "harness/prometheus/listen_address.h"
#include "harness/plan/schedule_plan.h"
#include "harness/plan/schedule_text.h"
#include "reports/model/schedule_json.h"
#include "harness/run/runner.h"
#include "harness/plan/workload_launcher.h"
#include "harness/scenario/scenario_loader.h"
#include "harness/cli/report_output.h"
#include "harness/derive/result_builder.h"
#include "harness/cli/repeat_run.h"
#include "harness/cli/sweep_run.h"

namespace chaosbench::harness {
namespace {

// --dry-run: what would start and when faults would fire; nothing is created.
void print_plan(const Scenario& s) {
  LaunchContext ctx;
  ctx.self_exe = "chaosbench";
  ctx.run_dir = "<out>";
  ctx.runtime_dir = "<runtime>";
  ctx.metrics_address = "unix:<runtime>/metrics.sock";
  ctx.scenario_dir = "<scenario_dir>";
  ctx.run_id = "<run-id>";
  ctx.node_addrs.assign(static_cast<std::size_t>(s.cluster.nodes), "127.0.0.1");
  if (runs_agents(s.cluster.mode))  // the controller's store, as each host reaches it
    ctx.node_stores.assign(static_cast<std::size_t>(s.cluster.nodes), "tcp:<controller>:<port>");
  std::cout << fmt::format("scenario {}: {} node(s) x {} rank(s), workload {}, timeout {}, seed {}\n", s.name,
                           s.cluster.nodes, s.cluster.ranks_per_node, workload_kind(s.workload),
                           common::to_string(s.timeout), s.seed);
  for (const auto& l : plan_workload(s, ctx))
    std::cout << fmt::format("  rank {} on node{}: {}\n", l.rank, l.node, fmt::join(l.spec.argv, " "));
  const auto plan = plan_schedule(s.faults, s.cluster.nodes, s.seed, s.timeout.seconds());
  for (const auto& line : describe_schedule(s.faults, plan, s.timeout.seconds())) std::cout << "  " << line << "\n";
  for (const auto& p : sweep_points(s.sweep)) std::cout << fmt::format("  sweep point: {}\n", p.label);
  for (const auto& c : s.checks)
    std::cout << fmt::format("  check {}{}{}\n", c.metric, c.min ? fmt::format(" >= {:g}", *c.min) : "",
                             c.max ? fmt::format(" <= {:g}", *c.max) : "");
}

// --dry-run --json: the seeded schedule, as results.json will record it.
void print_schedule_json(const Scenario& s) {
  const auto plan = plan_schedule(s.faults, s.cluster.nodes, s.seed, s.timeout.seconds());
  nlohmann::ordered_json j = {{"scenario", s.name}, {"seed", s.seed},
                              {"schedule", reports::schedule_to_json(schedule_entries(s.faults, plan))}};
  std::cout << j.dump(2) << "\n";
}

int dry_run(const Scenario& s, bool json) {
  if (json) print_schedule_json(s);
  else print_plan(s);
  return kExitPass;
}

// --metrics-listen, --grafana and --grafana-dashboard, checked before anything runs.
void read_live_options(const po::variables_map& vm, RunOptions& run) {
  if (vm.count("metrics-listen")) {
    run.metrics_listen = vm["metrics-listen"].as<std::string>();
    try {
      prometheus::parse_listen_address(run.metrics_listen);
    } catch (const std::invalid_argument& e) {
      throw UsageError(fmt::format("--metrics-listen: {}", e.what()));
    }
  }
  if (vm.count("grafana")) {
    run.grafana_url = vm["grafana"].as<std::string>();
    if (auto why = http::url_problem(run.grafana_url); !why.empty())
      throw UsageError(fmt::format("--grafana \"{}\": {}", run.grafana_url, why));
  }
  if (vm.count("grafana-dashboard")) {
    if (run.grafana_url.empty()) throw UsageError("--grafana-dashboard needs --grafana URL");
    run.grafana_dashboard = vm["grafana-dashboard"].as<std::string>();
  }
}

// --repeat and --interleave (the baseline scenario read and checked now, with the same
// --set and --seed); nullopt without --repeat.
std::optional<RepeatPlan> read_repeat_plan(const po::variables_map& vm, const LoadOptions& load) {
  if (!vm.count("repeat")) {
    if (vm.count("interleave")) throw UsageError("--interleave needs --repeat N");
    return std::nullopt;
  }
  RepeatPlan plan;
  plan.count = vm["repeat"].as<int>();
  if (plan.count < 1 || plan.count > 1000) throw UsageError("--repeat must be between 1 and 1000");
  if (vm.count("interleave")) {
    ScenarioSource base;
    base.file = vm["interleave"].as<std::string>();
    base.text = read_scenario_file(base.file);
    auto loaded = parse_scenario(base.text, base.file, load);
    for (const auto& w : loaded.warnings) std::cerr << format_diagnostic(w) << "\n";
    if (!loaded.scenario.sweep.empty()) throw UsageError("--interleave: the baseline scenario has a sweep");
    base.scenario = std::move(loaded.scenario);
    plan.interleave = std::move(base);
  }
  return plan;
}

}  // namespace

int cmd_run(const Args& args) {
  po::options_description options("Options");
  options.add_options()
      ("scenario", po::value<std::string>(), "scenario file")
      ("out,o", po::value<std::string>(), "output directory (default runs/<scenario>-<UTC timestamp>/)")
      ("set", po::value<std::vector<std::string>>()->composing(), "KEY=VALUE override, e.g. workload.iters=50 (repeatable)")
      ("seed", po::value<std::int64_t>(), "seed for random choices, >= 0 (overrides the scenario's)")
      ("dry-run", "validate and print the plan, with the fault schedule the seed draws; start nothing")
      ("json", "with --dry-run: print the realised fault schedule as JSON (results.json's \"schedule\")")
      ("repeat", po::value<int>(), "N: run the scenario N times (OUT/run-NN/) and combine them into OUT/results.json; "
                                   "--baseline then compares run by run")
      ("interleave", po::value<std::string>(), "BASELINE.json: with --repeat, run this baseline scenario alternately "
                                               "(ABBA) into OUT/baseline/ and gate against it")
      ("metrics-listen", po::value<std::string>(), "ADDR:PORT: serve the run's live state (phase, faults, probes, each "
                                                  "metric's newest value) as Prometheus text at /metrics")
      ("grafana", po::value<std::string>(), "URL of a Grafana: one region annotation per fault occurrence (token from "
                                           "CHAOSBENCH_GRAFANA_TOKEN); a failed post only warns")
      ("grafana-dashboard", po::value<std::string>(), "UID of the dashboard the annotations belong to (default: the "
                                                      "organisation's, found by their tags)");
  add_report_options(options);
  po::positional_options_description positional;
  positional.add("scenario", 1);
  auto cl = parse_command_line(args, options, positional);
  if (cl.help) {
    print_help("chaosbench run SCENARIO.json [--out DIR] [--set KEY=VALUE]... [--seed N] [--baseline RESULTS.json]\n"
               "                      [--report FORMAT[=FILE]]... [--annotations] [--dry-run [--json]] [--quiet]\n"
               "                      [--repeat N [--interleave BASELINE_SCENARIO.json]]\n"
               "                      [--metrics-listen ADDR:PORT] [--grafana URL [--grafana-dashboard UID]]",
               "Brings up the cluster, starts the workload, injects the scenario's faults on their timeline,\n"
               "collects metrics, evaluates the checks (and the baseline gate) and writes DIR/results.json,\n"
               "report.html, summary.md, junit.xml, trace.json, timeline.jsonl and logs/. Exit 0 pass, 1 a\n"
               "check or the gate failed or the workload failed, 2 scenario error, 3 host cannot do it,\n"
               "130 interrupted (everything stopped and reverted first).\n"
               "--metrics-listen serves the run's live state to Prometheus while it runs; --grafana marks each\n"
               "fault window on a Grafana (docs/prometheus.md).\n"
               "--repeat N runs it N times and gates run-level figures; --interleave alternates them with a\n"
               "baseline scenario's runs (docs/gate.md).",
               options);
    return kExitPass;
  }
  if (!cl.vm.count("scenario")) throw UsageError("no scenario file given");
  RunOptions run;
  read_live_options(cl.vm, run);  // a bad address or URL is a usage error before the scenario is read
  LoadOptions load;
  if (cl.vm.count("set")) load.overrides = cl.vm["set"].as<std::vector<std::string>>();
  if (cl.vm.count("seed")) {
    auto seed = cl.vm["seed"].as<std::int64_t>();
    if (seed < 0) throw UsageError("--seed must be 0 or more");
    load.seed = static_cast<std::uint64_t>(seed);
  }
  auto report_options = read_report_options(cl.vm);  // a bad baseline fails before anything runs
  check_baseline_environment(report_options, describe_environment());
  // A run always leaves results.json, whatever else --report picks.
  const bool json_asked = std::any_of(report_options.requests.begin(), report_options.requests.end(),
                                      [](const auto& r) { return r.format == reports::ReportFormat::kJson; });
  if (!report_options.requests.empty() && !json_asked)
    report_options.requests.push_back({reports::ReportFormat::kJson, ""});
  report_options.scenario_file = cl.vm["scenario"].as<std::string>();
  const std::string text = read_scenario_file(report_options.scenario_file);
  auto loaded = parse_scenario(text, report_options.scenario_file, load);
  for (const auto& w : loaded.warnings) std::cerr << format_diagnostic(w) << "\n";
  if (cl.vm.count("json") && !cl.vm.count("dry-run")) throw UsageError("--json goes with --dry-run");
  if (cl.vm.count("dry-run")) return dry_run(loaded.scenario, cl.vm.count("json") > 0);
  if (cl.vm.count("out")) run.out_dir = cl.vm["out"].as<std::string>();
  run.quiet = cl.vm.count("quiet") > 0;
  auto plan = read_repeat_plan(cl.vm, load);
  if (!loaded.scenario.sweep.empty()) {
    if (plan) throw UsageError("--repeat: a scenario with a sweep runs each point once; repeat a point instead");
    return run_sweep(text, report_options.scenario_file, load, loaded.scenario, run, report_options);
  }
  if (plan) {
    if (plan->interleave && report_options.baseline)
      throw UsageError("--interleave and --baseline: the interleaved runs are the baseline; give one of them");
    ScenarioSource current{report_options.scenario_file, text, loaded.scenario};
    return run_repeat(current, *plan, run, report_options);
  }
  auto outcome = run_scenario(loaded.scenario, run);
  return finish_reports(outcome.result, outcome.run_dir, report_options, outcome.source);
}

}  // namespace chaosbench::harness
