// chaosbench cleanup [--dry-run] — undo what runs that died left behind, from their
// journals only. Never touches anything a journal does not name, nor a live run's.
//
// Trust: the journal directory must be this user's and writable by nobody else (in a
// chain of directories only root or this user can change; common/files/trusted_directory.h);
// each journal must pass read_journal's checks (journal_reader.h), and each entry
// check_entry's (entry_checks.h). What fails is reported and left alone, the rest is
// still processed, and the exit code is 1.
#include <fmt/format.h>
#include <iostream>
#include <sys/stat.h>
#include <unistd.h>

#include "common/files/trusted_directory.h"
#include "harness/cli/cleanup_hosts.h"
#include "harness/cli/cli_options.h"
#include "harness/core/exit_code.h"
#include "harness/journal/entry_checks.h"
#include "harness/journal/journal.h"
#include "harness/journal/journal_reader.h"

namespace chaosbench::harness {
namespace {

// Undoes one dead run's pending entries, newest first. True when all are undone.
bool clean_run(const JournalFile& j, bool dry) {
  std::cout << fmt::format("run {} (pid {} gone, output {}): {} item{} to undo\n", j.run_id, j.pid, j.out,
                           j.pending.size(), j.pending.size() == 1 ? "" : "s");
  bool all = true;
  for (auto it = j.pending.rbegin(); it != j.pending.rend(); ++it) {
    if (std::string why = check_entry(j, *it); !why.empty()) {
      std::cout << fmt::format("  REJECTED {} entry {} ({}): {}; left alone\n", j.path, it->id, it->kind.substr(0, 64),
                               why);
      all = false;
      continue;
    }
    try {
      std::cout << "  " << undo_entry(*it, dry) << "\n";
    } catch (const std::exception& e) {
      std::cout << "  FAILED: " << e.what() << "\n";
      all = false;
    }
  }
  return all;
}

// cleanup --hosts: the options, then the same cleanup on every host over ssh.
int run_cleanup_hosts(const po::variables_map& vm, bool dry) {
  CleanupHostsOptions o;
  o.inventory = vm["hosts"].as<std::string>();
  o.ssh_config = vm["ssh-config"].as<std::string>();
  o.ssh_identity = vm["ssh-identity"].as<std::string>();
  if (vm.count("ssh-option")) o.ssh_options = vm["ssh-option"].as<std::vector<std::string>>();
  for (const auto& opt : o.ssh_options)
    if (opt.find('=') == std::string::npos) throw UsageError("--ssh-option: expected KEY=VALUE, got " + opt);
  o.agent_command = vm["agent-command"].as<std::string>();
  o.dry_run = dry;
  return cleanup_hosts(o);
}

}  // namespace

int cmd_cleanup(const Args& args) {
  po::options_description options("Options");
  options.add_options()
      ("dry-run", "list what would be undone; change nothing")
      ("journal-dir", po::value<std::string>(), "where journals are (default: CHAOSBENCH_JOURNAL_DIR, /run/chaosbench as root)")
      ("hosts", po::value<std::string>(), "INVENTORY: run cleanup on every host it lists, over ssh")
      ("ssh-config", po::value<std::string>()->default_value(""), "with --hosts: the ssh client's config file (-F)")
      ("ssh-identity", po::value<std::string>()->default_value(""), "with --hosts: the key file (-i)")
      ("ssh-option", po::value<std::vector<std::string>>()->composing(), "with --hosts: KEY=VALUE, an ssh -o option (repeatable)")
      ("agent-command", po::value<std::string>()->default_value("chaosbench"), "with --hosts: chaosbench on the hosts");
  auto cl = parse_command_line(args, options, {});
  if (cl.help) {
    print_help("chaosbench cleanup [--dry-run] [--hosts INVENTORY [--ssh-config FILE] [--ssh-identity KEY]\n"
               "                   [--ssh-option KEY=VALUE]... [--agent-command PATH]]",
               "Reverts everything journaled by runs whose harness is gone (killed, crashed, power loss):\n"
               "processes, runtime directories and, as later features add them, namespaces, links,\n"
               "cgroups, qdiscs and netfilter rules, newest first. Runs still alive are left alone.\n"
               "Only journals this user owns, in a directory nobody else can write, are believed, and\n"
               "only entries naming what their run creates are acted on; the rest is reported.\n"
               "With --hosts, does the same on every host of an inventory (cluster.hosts' format) over\n"
               "ssh, 16 hosts at a time, each line prefixed with the host's name.\n"
               "Exit 0 when everything was undone (or nothing was left), 1 when something was not,\n"
               "3 when a host could not be reached.",
               options);
    return kExitPass;
  }
  const bool dry = cl.vm.count("dry-run") > 0;
  if (cl.vm.count("hosts")) return run_cleanup_hosts(cl.vm, dry);
  const std::string dir = cl.vm.count("journal-dir") ? cl.vm["journal-dir"].as<std::string>() : Journal::default_directory();
  struct stat st {};
  if (::lstat(dir.c_str(), &st) != 0) {
    std::cout << fmt::format("nothing to clean up in {}\n", dir);
    return kExitPass;
  }
  if (std::string why = common::check_trusted_directory(dir); !why.empty()) {
    std::cout << fmt::format("journal directory not trusted, nothing done: {}\n", why);
    return kExitCheckFailed;
  }
  int rc = kExitPass;
  std::size_t runs = 0;
  for (const auto& j : scan_journals(dir)) {
    if (!j.error.empty()) {
      std::cout << fmt::format("{}; journal left alone\n", j.error);
      rc = kExitCheckFailed;
    } else if (j.empty) {
      std::cout << fmt::format("{}: no complete line (a run that died before journaling anything, or one starting "
                               "now); left alone\n", j.path);
    } else if (j.owner_alive) {
      std::cout << fmt::format("run {} (pid {}) is still running; left alone\n", j.run_id, j.pid);
    } else {
      ++runs;
      if (!clean_run(j, dry)) rc = kExitCheckFailed;
      else if (!dry) ::unlink(j.path.c_str());
    }
  }
  if (runs == 0) std::cout << fmt::format("nothing to clean up in {}\n", dir);
  return rc;
}

}  // namespace chaosbench::harness
