// chaosbench history add DIR RESULTS.json... — appends runs to a history store
// (reports/history/history_store.h, docs/history.md), and the dispatch to gate and show.
#include "harness/cli/cmd_history.h"

#include <fmt/format.h>
#include <iostream>
#include <map>
#include <stdexcept>
#include <vector>

#include "harness/cli/cli_options.h"
#include "harness/cli/environment_check.h"
#include "harness/core/exit_code.h"
#include "harness/cli/results_file.h"
#include "reports/history/history_file.h"
#include "reports/history/history_store.h"
#include "reports/model/json_io.h"

namespace chaosbench::harness {
namespace {

constexpr const char* kHistoryUsage =
    "Usage: chaosbench history add DIR RESULTS.json... [--allow-env-diff] [--allow-incomplete]\n"
    "       chaosbench history gate DIR RESULTS.json [--window K] [--alpha A] [--tolerance PCT]\n"
    "                               [--min-history N] [--testbed LABEL] [--allow-env-diff] [--json]\n"
    "                               [--summary FILE]\n"
    "       chaosbench history show DIR [--testbed T] [--scenario S] [--metric M] [--window K]\n"
    "                               [--json | --markdown]\n\n"
    "Keeps the gated metrics of every run per testbed x scenario (DIR/<testbed>/<scenario>/history.jsonl;\n"
    "the testbed is CHAOSBENCH_TESTBED's label, \"unlabelled\" without one) and gates a run against\n"
    "the last K runs instead of one baseline:\n"
    "  add   appends each results file's run, in order (a run_id already there, or a run from other\n"
    "        hardware than the newest entry, or one that did not finish, is refused and nothing is\n"
    "        written; the file is locked, so concurrent CI jobs wait for each other).\n"
    "  gate  compares each gated statistic (p50, p99 of latencies, or the single value) with a\n"
    "        Student's t prediction interval of the last K runs (default 30) at 1 - alpha (0.01), on\n"
    "        log values: FAIL when the current value lies outside it on the worse side and its change\n"
    "        is beyond the tolerance (5%, or the scenario's per metric); WARN with fewer than\n"
    "        min-history (5) runs, or when a change-point pass (pooled t over every split, permutation\n"
    "        test, binary segmentation) finds a worse step beyond the tolerance, naming its first run.\n"
    "        Runs from another testbed or hardware are refused (exit 2, naming what differs) unless\n"
    "        --allow-env-diff. --summary FILE appends a Markdown trend table (for\n"
    "        $GITHUB_STEP_SUMMARY). The gate never changes the store: run `history add` after it.\n"
    "  show  prints the trend of each metric: the last K values, their median and the steps found.\n\n"
    "Exit codes: 0 pass or warn, 1 the gate failed, 2 usage error, an unreadable file or history,\n"
    "or runs from other hardware. docs/history.md explains the method.\n"
    "`chaosbench history SUBCOMMAND --help` lists each subcommand's options.\n";

struct Pending {
  std::string file;
  reports::HistoryEntry entry;
};

// Refuses, before anything is written, a run already in its history (or twice in this
// add) and a run from other hardware than the entry it would follow.
void check_pending(const reports::HistoryFile& history, const std::vector<Pending>& pending, bool allow_env_diff) {
  const reports::HistoryEntry* previous = history.entries().empty() ? nullptr : &history.entries().back();
  for (std::size_t i = 0; i < pending.size(); ++i) {
    const auto& p = pending[i];
    if (const auto* there = history.find(p.entry.run_id))
      throw std::runtime_error(fmt::format("{}: run {} is already in {} (line {})", p.file, p.entry.run_id,
                                           history.path(), there->line));
    for (std::size_t j = 0; j < i; ++j)
      if (pending[j].entry.run_id == p.entry.run_id)
        throw std::runtime_error(fmt::format("{}: run {} is also in {}", p.file, p.entry.run_id, pending[j].file));
    if (previous)
      check_same_environment(previous->environment, p.entry.environment,
                             fmt::format("{}: the run before it in {} ({})", p.file, history.path(), previous->run_id),
                             fmt::format("the run before {} in {}", p.entry.run_id, history.path()), allow_env_diff);
    previous = &p.entry;
  }
}

// A run that did not finish measured part of what it should: as a point of the history
// it would skew the next K gates. A failed run (a check or a gate) measured everything.
void check_finished(const std::string& file, const reports::RunResult& run, bool allow) {
  if (run.verdict == reports::Verdict::kPass || run.verdict == reports::Verdict::kFail) return;
  const auto verdict = std::string(reports::to_string(run.verdict));
  if (!allow)
    throw std::runtime_error(fmt::format("{}: the run's verdict is {}: its metrics may be partial, so it is no "
                                         "point of a history (--allow-incomplete adds it anyway)",
                                         file, verdict));
  std::cerr << fmt::format("chaosbench history: warning: {}: added although its verdict is {}\n", file, verdict);
}

int history_add(const Args& args) {
  po::options_description options("Options");
  options.add_options()
      ("files", po::value<std::vector<std::string>>()->multitoken(), "DIR RESULTS.json...")
      ("allow-env-diff", "add a run measured on other hardware than the history's newest run (else exit 2)")
      ("allow-incomplete", "add a run whose verdict is error, interrupted or aborted (else exit 2)");
  po::positional_options_description positional;
  positional.add("files", -1);
  auto cl = parse_command_line(args, options, positional);
  if (cl.help) {
    print_help("chaosbench history add DIR RESULTS.json... [--allow-env-diff] [--allow-incomplete]",
               "Appends each results file's run to DIR/<testbed>/<scenario>/history.jsonl, in order.\n"
               "Refused (exit 2, nothing written): an unreadable file, a run without run_id or already in\n"
               "its history, a run from other hardware than the run before it (unless --allow-env-diff),\n"
               "a run that did not finish: verdict error, interrupted or aborted (unless --allow-incomplete).",
               options);
    return kExitPass;
  }
  std::vector<std::string> files;
  if (cl.vm.count("files")) files = cl.vm["files"].as<std::vector<std::string>>();
  if (files.size() < 2) throw UsageError("expected DIR and at least one results file");
  const std::string dir = files.front();
  std::map<std::string, std::vector<Pending>> by_path;  // sorted: locks are taken in one order
  for (std::size_t i = 1; i < files.size(); ++i) {
    auto run = load_history_results(files[i]);
    if (!run) return kExitUsage;
    if (run->run_id.empty()) throw std::runtime_error(files[i] + ": no run_id (a history names each run by it)");
    check_finished(files[i], *run, cl.vm.count("allow-incomplete") > 0);
    const auto path = reports::history_path(dir, run->environment.testbed, run->scenario_name);
    by_path[path].push_back({files[i], reports::history_entry_of(*run)});
  }
  std::vector<reports::HistoryFile> histories;
  for (const auto& [path, pending] : by_path) {
    histories.push_back(reports::HistoryFile::open_for_append(path));
    print_history_notes(histories.back().notes());
    check_pending(histories.back(), pending, cl.vm.count("allow-env-diff") > 0);
  }
  std::size_t k = 0;
  for (const auto& [path, pending] : by_path) {
    auto& history = histories[k++];
    std::vector<reports::HistoryEntry> entries;
    for (const auto& p : pending) entries.push_back(p.entry);
    history.append(entries);
    for (const auto& p : pending)
      std::cout << fmt::format("{}: added run {} ({} gated records) to {}\n", p.file, p.entry.run_id,
                               p.entry.records.size(), path);
  }
  return kExitPass;
}

}  // namespace

std::optional<reports::RunResult> load_history_results(const std::string& file) {
  return load_results_file("history", file);
}

void print_history_notes(const std::vector<std::string>& notes) {
  for (const auto& n : notes) std::cerr << "chaosbench history: " << n << "\n";
}

std::string testbed_label(const std::string& testbed) {
  return testbed.empty() ? reports::kUnlabelledTestbed : testbed;
}

int cmd_history(const Args& args) {
  if (args.empty() || args[0] == "--help" || args[0] == "-h" || args[0] == "help") {
    (args.empty() ? std::cerr : std::cout) << kHistoryUsage;
    return args.empty() ? kExitUsage : kExitPass;
  }
  const Args rest(args.begin() + 1, args.end());
  try {
    if (args[0] == "add") return history_add(rest);
    if (args[0] == "gate") return history_gate(rest);
    if (args[0] == "show") return history_show(rest);
  } catch (const UsageError&) {
    throw;
  } catch (const std::runtime_error& e) {
    // A history or results file that cannot be read or written, or is not one: exit 2 as
    // compare's unreadable files, naming the file (the message does).
    std::cerr << "chaosbench history: " << e.what() << "\n";
    return kExitUsage;
  }
  throw UsageError(fmt::format("unknown subcommand \"{}\": expected add, gate or show", args[0]));
}

}  // namespace chaosbench::harness
