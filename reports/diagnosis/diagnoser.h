// The diagnosis engine (diagnosis.h; docs/diagnosis.md): samples go in as they come, in
// any order within a lag; windows are judged in time order once the lag has passed, so
// the same engine runs live (the harness feeds it every second) and after the run
// (`chaosbench diagnose` replays results.json's series), and both name the same culprits
// at the same times, as long as results.json kept every sample (a series is thinned past
// 20,000 points) and both use the same window.
//
// Each window, per signal, a series' value is compared with its own baseline (the median
// and robust spread of its earlier normal windows) and with its peers at the same window:
//   - link mesh: a pair's round trip above both by max(1 ms, 6 spreads) (its peers: the
//     pairs that touch neither of its nodes, or the pairs that do not touch one of them,
//     whichever median is lower), or its loss over the last 3 windows at 5 % or more
//     where its baseline had under 1 %: the unordered link is abnormal. Abnormal links all
//     at one node (two or more, at least two thirds of that node's links, and at most a
//     third as many elsewhere) are its NIC; otherwise one or two abnormal links are those
//     links, and more name nothing (no one place stands out);
//   - ranks: a rank whose compute time per step is 1.3x its baseline and 1.3x the median
//     of the other ranks is a straggler; its node's threads waiting for a CPU (node/
//     cpu_wait per CPU used, 1.5x its baseline) make it the node (CPU starved), otherwise
//     its device (slow device). node/cpu_throttled is not read: a node has a cpu cgroup
//     only when the scenario has a fault that needs one, so the series' mere presence
//     would tell of the fault.
// A verdict names a culprit once it has held in 3 of the last 4 judged windows; an
// episode that has not held for 4 judged windows closes (a later one is a new culprit).
// Confidence grows with how long it holds and by how much it clears its threshold.
// Threads: one at a time.
#pragma once

#include <cstdint>
#include <deque>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "reports/diagnosis/diagnosis.h"
#include "reports/model/run_model.h"

namespace chaosbench::reports {

class Diagnoser {
 public:
  explicit Diagnoser(double window_s = 1.0, double lag_s = 2.0);

  // Whether the engine reads series `name` (others need not be fed).
  static bool reads(const std::string& name);
  // A sample at `t` (seconds since the workload started). Samples of series the engine
  // does not read are ignored, as are times that are not finite or beyond kMaxTimeS either
  // way, and ranks outside 0..2^20; one for a window already judged is dropped.
  void add(const std::string& name, const Labels& labels, double t, double value);
  // Which node a rank runs on (default: rank r on node r).
  void set_rank_node(int rank, const std::string& node);
  // Judges every window that ended at least the lag before `now` (stretches in which no
  // series had a sample are skipped); returns the culprits newly named by it.
  std::vector<DiagnosisCulprit> advance(double now);
  // Everything named so far, most confident first.
  Diagnosis result() const;

  static constexpr double kMaxTimeS = 1e7;  // 115 days either side of the workload's start

 private:
  struct Track {
    std::map<std::int64_t, std::vector<double>> pending;  // window -> samples
    std::vector<double> normal;                           // values of normal windows
    std::optional<double> last;                           // carried forward into empty windows
    int carried = 0;                                      // windows it has been carried
  };
  struct Verdict {
    std::string cls, component, what;
    double strength = 1;  // effect / threshold, >= 1
    std::vector<DiagnosisEvidence> evidence;
  };
  // One stretch in which a verdict held (with lapses of fewer than kRecent windows).
  struct Episode {
    DiagnosisCulprit culprit;
    std::deque<bool> recent;  // the last windows: did it hold
    bool named = false;
    double best_strength = 0;
    int held = 0;
  };
  // A pair's round trip this window, for the link rules.
  struct PairValue {
    std::string src, dst;
    double rtt = 0;
  };
  struct PairFinding {
    std::string src, dst;
    double strength = 1;
    DiagnosisEvidence evidence;
    bool loss = false;
  };
  // This window's CPU wait per CPU used of each node, judged against its baseline.
  struct NodeCpu {
    std::optional<double> wait_per_cpu, baseline;
    bool starved = false;
  };

  std::vector<DiagnosisCulprit> judge(std::int64_t w);
  void track_episodes(const std::vector<Verdict>& verdicts, std::int64_t w, std::vector<DiagnosisCulprit>& named);
  static double confidence(const Episode& e);
  std::optional<double> take(Track& t, std::int64_t w, int carry_max);
  std::optional<std::int64_t> first_pending() const;
  std::vector<Verdict> judge_links(std::int64_t w);
  std::vector<PairFinding> judge_rtts(std::int64_t w);
  std::vector<PairFinding> judge_losses(std::int64_t w);
  static std::vector<Verdict> group_links(const std::vector<PairFinding>& found, std::size_t node_count);
  std::vector<Verdict> judge_ranks(std::int64_t w);
  std::map<std::string, NodeCpu> judge_nodes(std::int64_t w);

  double window_s_, lag_s_;
  std::optional<std::int64_t> next_;  // the next window to judge
  std::int64_t judged_ = 0;
  std::map<std::pair<std::string, std::string>, Track> rtt_, loss_;  // (src, dst)
  std::map<int, Track> compute_;                                     // rank
  std::map<std::string, Track> wait_, usage_;                        // node
  std::map<std::pair<std::string, std::string>, std::deque<double>> loss_recent_;
  std::map<int, std::string> rank_node_;
  bool ranks_judged_ = false;  // this window had a rank's fresh compute time
  std::map<std::string, Episode> episodes_;  // open, by cls + component
  std::vector<DiagnosisCulprit> closed_;     // named culprits whose episode has lapsed
  std::set<std::string> inputs_;
  std::set<std::string> notes_;
};

// Replays a run's series through the engine (samples in time order, then the lag).
// `processes` say which node each rank ran on. `window_s` 0: the mesh's window, read from
// how its samples are spaced (1 s without a mesh).
Diagnosis diagnose_series(const std::vector<Series>& series, const std::vector<ProcessRecord>& processes,
                          double window_s = 0);

}  // namespace chaosbench::reports
