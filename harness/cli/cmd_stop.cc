// chaosbench stop [RUN_ID] — the kill switch: stops a running run as a stop condition
// would (every fault reverted, the workload stopped, verdict aborted, exit 4), by creating
// the run's stop file (harness/run/kill_switch.h), then waits for the run to end.
// Runs are found by their journals (journal_reader.h): only this user's, in the trusted
// journal directory, whose harness still runs. Agents' journals (RUN-nN) are not runs.
#include <fmt/format.h>
#include <unistd.h>

#include <chrono>
#include <ctime>
#include <iostream>
#include <sys/stat.h>
#include <thread>

#include "common/files/safe_files.h"
#include "common/files/trusted_directory.h"
#include "common/values/units.h"
#include "harness/cli/cli_options.h"
#include "harness/core/exit_code.h"
#include "harness/journal/journal.h"
#include "harness/journal/journal_reader.h"
#include "harness/journal/process_identity.h"
#include "harness/run/kill_switch.h"

namespace chaosbench::harness {
namespace {

// A controller's run id: 12 hex digits (make_run_id); an agent's journal is RUN-nNODE.
bool controller_run(const std::string& id) {
  return id.size() == 12 && id.find_first_not_of("0123456789abcdef") == std::string::npos;
}

std::vector<JournalFile> live_runs(const std::string& dir) {
  std::vector<JournalFile> runs;
  struct stat st {};
  if (::lstat(dir.c_str(), &st) != 0) return runs;
  if (std::string why = common::check_trusted_directory(dir); !why.empty())
    throw UsageError(fmt::format("journal directory not trusted: {}", why));
  // A run records its output directory as an absolute path; a relative one would be
  // resolved against this command's working directory, not the run's.
  for (auto& j : scan_journals(dir))
    if (j.error.empty() && j.owner_alive && controller_run(j.run_id) && j.out.starts_with('/'))
      runs.push_back(std::move(j));
  return runs;
}

// The run RUN_ID names (a unique prefix is enough), or the only one running.
JournalFile pick_run(const std::vector<JournalFile>& runs, const std::string& wanted) {
  std::vector<const JournalFile*> match;
  for (const auto& j : runs)
    if (wanted.empty() || j.run_id.rfind(wanted, 0) == 0) match.push_back(&j);
  if (match.size() == 1) return *match.front();
  std::string list;
  for (const auto* j : match) list += fmt::format("\n  {} (pid {}, output {})", j->run_id, j->pid, j->out);
  if (match.empty())
    throw UsageError(wanted.empty() ? "no run is running (as this user)" : fmt::format("no running run {}", wanted));
  throw UsageError(fmt::format("{} runs match; name one:{}", match.size(), list));
}

std::string stop_note(const std::string& reason) {
  char when[32];
  std::time_t now = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&now, &tm);
  std::strftime(when, sizeof(when), "%Y-%m-%dT%H:%M:%SZ", &tm);
  std::string who = fmt::format("chaosbench stop (uid {}, pid {}) at {}", ::getuid(), ::getpid(), when);
  return reason.empty() ? who + "\n" : fmt::format("{}: {}\n", who, reason);
}

}  // namespace

int cmd_stop(const Args& args) {
  po::options_description options("Options");
  options.add_options()
      ("run", po::value<std::string>()->default_value(""), "the run id (or a unique prefix); default: the only running run")
      ("reason", po::value<std::string>()->default_value(""), "why, recorded in the run's results")
      ("wait", po::value<std::string>()->default_value("60s"), "how long to wait for the run to end (0: do not wait)")
      ("journal-dir", po::value<std::string>(), "where journals are (default: CHAOSBENCH_JOURNAL_DIR, /run/chaosbench as root)");
  po::positional_options_description positional;
  positional.add("run", 1);
  auto cl = parse_command_line(args, options, positional);
  if (cl.help) {
    print_help("chaosbench stop [RUN_ID] [--reason TEXT] [--wait DURATION]",
               "The kill switch: stops a running run now, as a stop condition would. The run reverts every\n"
               "fault, stops its workload, writes every report with verdict aborted and exits 4. Without\n"
               "RUN_ID, stops the only run running as this user. The same as creating the file `stop` in\n"
               "the run's output directory. Exit 0 when the run ended, 1 when it did not within --wait,\n"
               "2 when no run (or more than one) matches.",
               options);
    return kExitPass;
  }
  const auto parsed = common::parse_duration(cl.vm["wait"].as<std::string>());
  if (!parsed) throw UsageError(fmt::format("--wait: {}", parsed.error));
  const common::Duration wait = *parsed;
  const std::string dir = cl.vm.count("journal-dir") ? cl.vm["journal-dir"].as<std::string>() : Journal::default_directory();
  const JournalFile run = pick_run(live_runs(dir), cl.vm["run"].as<std::string>());
  const std::string file = KillSwitch::path_in(run.out);
  if (std::string why = common::write_file_atomically(file, stop_note(cl.vm["reason"].as<std::string>())); !why.empty()) {
    std::cout << fmt::format("cannot pull the kill switch of run {}: {}\n", run.run_id, why);
    return kExitHost;
  }
  std::cout << fmt::format("run {} (pid {}): kill switch pulled ({})\n", run.run_id, run.pid, file);
  const auto deadline = std::chrono::steady_clock::now() + wait.value;
  while (same_process(run.pid, run.start_time)) {
    if (std::chrono::steady_clock::now() >= deadline) {
      if (wait.value.count() > 0) std::cout << fmt::format("run {} still runs after {}\n", run.run_id, common::to_string(wait));
      return wait.value.count() > 0 ? kExitCheckFailed : kExitPass;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  std::cout << fmt::format("run {} ended; its reports are in {}\n", run.run_id, run.out);
  return kExitPass;
}

}  // namespace chaosbench::harness
