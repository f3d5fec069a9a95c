// The rank table: the workload's planned ranks (launches), the process running each now,
// how often each was restarted, and one ProcessRecord per process ever started (restarts
// included) with how it ended. It starts processes through a node site and records their
// exits; it judges nothing: whether an exit is a failure is the run's to say.
// Threads: the run's thread only.
#pragma once

#include <cstddef>
#include <functional>
#include <map>
#include <set>
#include <string>
#include <sys/types.h>
#include <vector>

#include "harness/site/node_site.h"
#include "harness/plan/workload_launcher.h"
#include "reports/model/run_model.h"

namespace chaosbench::harness {

class RankTable {
 public:
  // `out_dir` is the run's directory, logs are named relative to it. Borrows `site`.
  RankTable(NodeSite& site, std::string out_dir) : site_(site), out_dir_(std::move(out_dir)) {}

  // A new plan (the first, or a restart of every rank): no rank runs yet; each has been
  // restarted `restarts` times so far.
  void plan(std::vector<RankLaunch> launches, int restarts);

  // Starts launch `idx` on its node with `spec` (the launch's, with the run's additions)
  // and records it as started at `now()` once the site has started it. A restarted
  // rank's logs get their own files, so the first life's stay. Returns its record.
  // Throws when it cannot start.
  const reports::ProcessRecord& start(std::size_t idx, ProcessSpec spec, const std::function<double()>& now);
  // Counts one more restart of launch `idx` (before start()).
  void count_restart(std::size_t idx) { ++restarts_[idx]; }

  const std::vector<RankLaunch>& launches() const { return launches_; }
  int restarts(std::size_t idx) const { return restarts_[idx]; }
  // Whether launch `idx`'s current process runs.
  bool running(std::size_t idx) const;
  // Launch `idx`'s current process, -1 before it started.
  pid_t pid(std::size_t idx) const { return pids_[idx]; }
  // The ranks as they run now (pid -1 where not running), for a fault's target.
  std::vector<RankProcess> processes() const;
  // The launches whose current process is one of `pids`.
  std::vector<std::size_t> launches_of(const std::vector<pid_t>& pids) const;
  // The node rank `rank` runs on, -1 when no launch has it.
  int node_of_rank(int rank) const;

  // An exit that is some fault's or the harness's doing, on purpose: not a failure.
  void expect_exit(pid_t pid) { expected_exits_.insert(pid); }
  // Records the exit of `pid` at `now_s` from the site's status. Returns its record, or
  // null for a pid not started here or already recorded as ended.
  reports::ProcessRecord* record_exit(pid_t pid, double now_s);
  // Pids started and not yet recorded as ended.
  std::vector<pid_t> unended() const;
  const std::vector<reports::ProcessRecord>& records() const { return records_; }

 private:
  NodeSite& site_;
  std::string out_dir_;
  std::vector<RankLaunch> launches_;
  std::vector<pid_t> pids_;    // by launch index: the rank's current process
  std::vector<int> restarts_;  // by launch index
  std::vector<reports::ProcessRecord> records_;  // every process started, restarts included
  std::map<pid_t, std::size_t> record_of_pid_;   // index into records_
  std::set<pid_t> expected_exits_;
};

}  // namespace chaosbench::harness
