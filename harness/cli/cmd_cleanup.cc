// chaosbench cleanup [--dry-run] — undo what runs that died left behind, from their
// journals only. Never touches anything a journal does not name, nor a live run's.
#include <fmt/format.h>
#include <iostream>
#include <unistd.h>

#include "harness/cli/cli_options.h"
#include "harness/cli/exit_code.h"
#include "harness/journal/journal.h"
#include "harness/journal/journal_reader.h"

namespace chaosbench::harness {

int cmd_cleanup(const Args& args) {
  po::options_description options("Options");
  options.add_options()
      ("dry-run", "list what would be undone; change nothing")
      ("journal-dir", po::value<std::string>(), "where journals are (default: CHAOSBENCH_JOURNAL_DIR, /run/chaosbench as root)");
  auto cl = parse_command_line(args, options, {});
  if (cl.help) {
    print_help("chaosbench cleanup [--dry-run]",
               "Reverts everything journaled by runs whose harness is gone (killed, crashed, power loss):\n"
               "processes, runtime directories and, as later features add them, namespaces, links,\n"
               "cgroups, qdiscs and netfilter rules, newest first. Runs still alive are left alone.\n"
               "Exit 0 when everything was undone (or nothing was left), 1 when something could not be.",
               options);
    return kExitPass;
  }
  const bool dry = cl.vm.count("dry-run") > 0;
  const std::string dir = cl.vm.count("journal-dir") ? cl.vm["journal-dir"].as<std::string>() : Journal::default_directory();
  int rc = kExitPass;
  std::size_t runs = 0;
  for (const auto& j : scan_journals(dir)) {
    if (!j.error.empty()) {
      std::cout << fmt::format("{}: unreadable ({}); left alone\n", j.path, j.error);
      continue;
    }
    if (j.owner_alive) {
      std::cout << fmt::format("run {} (pid {}) is still running; left alone\n", j.run_id, j.pid);
      continue;
    }
    ++runs;
    std::cout << fmt::format("run {} (pid {} gone, output {}): {} item{} to undo\n", j.run_id, j.pid, j.out,
                             j.pending.size(), j.pending.size() == 1 ? "" : "s");
    bool all = true;
    for (auto it = j.pending.rbegin(); it != j.pending.rend(); ++it) {
      try {
        std::cout << "  " << undo_entry(*it, dry) << "\n";
      } catch (const std::exception& e) {
        std::cout << "  FAILED: " << e.what() << "\n";
        all = false;
        rc = kExitCheckFailed;
      }
    }
    if (all && !dry) ::unlink(j.path.c_str());
  }
  if (runs == 0) std::cout << fmt::format("nothing to clean up in {}\n", dir);
  return rc;
}

}  // namespace chaosbench::harness
