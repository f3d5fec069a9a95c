#include "harness/run/rank_table.h"

#include <filesystem>
#include <fmt/format.h>

namespace chaosbench::harness {

void RankTable::plan(std::vector<RankLaunch> launches, int restarts) {
  launches_ = std::move(launches);
  pids_.assign(launches_.size(), -1);
  restarts_.assign(launches_.size(), restarts);
}

const reports::ProcessRecord& RankTable::start(std::size_t idx, ProcessSpec spec, const std::function<double()>& now) {
  const auto& l = launches_[idx];
  const int restart = restarts_[idx];
  if (restart > 0) {  // keep the first life's logs
    spec.stdout_path = fmt::format("{}/logs/rank{}.restart{}.out", out_dir_, l.rank, restart);
    spec.stderr_path = fmt::format("{}/logs/rank{}.restart{}.err", out_dir_, l.rank, restart);
  }
  const pid_t pid = site_.start(l.node, spec);  // throws when the program cannot start
  pids_[idx] = pid;
  reports::ProcessRecord p;
  p.role = "rank";
  p.rank = l.rank;
  p.node = fmt::format("node{}", l.node);
  p.host = site_.host_name(l.node);
  p.pid = pid;
  p.restart = restart;
  p.started_at_s = now();
  p.stdout_log = std::filesystem::relative(spec.stdout_path, out_dir_).string();
  p.stderr_log = std::filesystem::relative(spec.stderr_path, out_dir_).string();
  record_of_pid_[pid] = records_.size();
  records_.push_back(p);
  return records_.back();
}

bool RankTable::running(std::size_t idx) const { return pids_[idx] > 0 && site_.status(pids_[idx]).running; }

std::vector<RankProcess> RankTable::processes() const {
  std::vector<RankProcess> out;
  for (std::size_t i = 0; i < launches_.size(); ++i)
    out.push_back({launches_[i].rank, launches_[i].node, running(i) ? pids_[i] : -1});
  return out;
}

std::vector<std::size_t> RankTable::launches_of(const std::vector<pid_t>& pids) const {
  std::vector<std::size_t> out;
  for (pid_t pid : pids)
    for (std::size_t k = 0; k < pids_.size(); ++k)
      if (pids_[k] == pid) out.push_back(k);
  return out;
}

int RankTable::node_of_rank(int rank) const {
  int node = -1;
  for (const auto& l : launches_)
    if (l.rank == rank) node = l.node;
  return node;
}

reports::ProcessRecord* RankTable::record_exit(pid_t pid, double now_s) {
  auto it = record_of_pid_.find(pid);
  if (it == record_of_pid_.end()) return nullptr;
  auto& p = records_[it->second];
  if (p.ended_at_s) return nullptr;
  const auto& st = site_.status(pid);
  p.exit_code = st.exit_code;
  p.signal = st.signal;
  p.ended_at_s = now_s;
  p.ended_by_fault = expected_exits_.count(pid) > 0;
  return &p;
}

std::vector<pid_t> RankTable::unended() const {
  std::vector<pid_t> out;
  for (const auto& [pid, idx] : record_of_pid_)
    if (!records_[idx].ended_at_s) out.push_back(pid);
  return out;
}

}  // namespace chaosbench::harness
