// The diagnosis engine's rules for one window (diagnoser.h): links and NICs from the link
// mesh, stragglers from the ranks' compute times, told apart as a CPU-starved node or a
// slow device by the node's CPU wait.
#include <algorithm>
#include <cmath>
#include <fmt/format.h>
#include <set>

#include "common/values/percentile.h"
#include "reports/diagnosis/diagnoser.h"
#include "reports/stats/statistics.h"

namespace chaosbench::reports {
namespace {

constexpr int kMinBaseline = 5;
constexpr std::size_t kMaxBaseline = 300;
constexpr double kRttFloorMs = 1.0;
constexpr double kRttSpreads = 6;
constexpr double kMinSpreadMs = 0.02;
constexpr double kLossPct = 5;
constexpr double kLossBaselinePct = 1;
constexpr std::size_t kLossWindows = 3;
constexpr double kStraggle = 1.3;
constexpr double kStarved = 1.5;
constexpr int kCarryWindows = 5;
// Beyond these the mesh is not judged (each window costs nodes x pairs).
constexpr std::size_t kMaxMeshNodes = 256;
constexpr std::size_t kMaxRanks = 65536;
constexpr std::size_t kMaxEvidence = 4;

double spread_of(const std::vector<double>& v, double centre) {
  std::vector<double> dev;
  dev.reserve(v.size());
  for (double x : v) dev.push_back(std::fabs(x - centre));
  return 1.4826 * common::median(std::move(dev));
}

void keep(std::vector<double>& normal, double v) {
  normal.push_back(v);
  if (normal.size() > kMaxBaseline) normal.erase(normal.begin());
}

std::string link_of(const std::string& a, const std::string& b) { return a < b ? a + "-" + b : b + "-" + a; }

}  // namespace

std::vector<Diagnoser::PairFinding> Diagnoser::judge_rtts(std::int64_t w) {
  const double end = static_cast<double>(w + 1) * window_s_;
  std::vector<PairValue> now;
  std::set<std::string> nodes;
  for (auto& [key, track] : rtt_)
    if (auto v = take(track, w, 0)) {
      now.push_back({key.first, key.second, *v});
      nodes.insert(key.first), nodes.insert(key.second);
    }
  if (nodes.size() > kMaxMeshNodes) {
    notes_.insert(fmt::format("the link mesh has {} nodes; links are judged up to {}", nodes.size(), kMaxMeshNodes));
    return {};
  }
  // Each node's "the others": the median round trip of the pairs that do not touch it.
  std::map<std::string, double> without;
  for (const auto& x : nodes) {
    std::vector<double> others;
    for (const auto& p : now)
      if (p.src != x && p.dst != x) others.push_back(p.rtt);
    without[x] = common::median(std::move(others));
  }
  std::vector<PairFinding> found;
  for (const auto& p : now) {
    auto& normal = rtt_[{p.src, p.dst}].normal;
    const double base = common::median(normal);
    const double spread = std::max(kMinSpreadMs, spread_of(normal, base));
    const double thr = std::max(kRttFloorMs, kRttSpreads * spread);
    const double a = without[p.src], b = without[p.dst];
    const double peers = std::isnan(a) ? b : std::isnan(b) ? a : std::min(a, b);
    if (static_cast<int>(normal.size()) < kMinBaseline || std::isnan(peers) || !(p.rtt - base > thr) ||
        !(p.rtt - peers > thr)) {
      if (static_cast<int>(normal.size()) < kMinBaseline || !(p.rtt - base > thr)) keep(normal, p.rtt);
      continue;
    }
    DiagnosisEvidence e{"net/pair_rtt", {{"src", p.src}, {"dst", p.dst}}, end, p.rtt, base, peers, (p.rtt - base) / spread,
                        fmt::format("{} -> {} round trip {:.2f} ms: +{:.2f} ms over its baseline {:.3f} ms ({:.0f} "
                                    "spreads) and {:.1f}x its peers' {:.3f} ms",
                                    p.src, p.dst, p.rtt, p.rtt - base, base, (p.rtt - base) / spread,
                                    p.rtt / std::max(peers, 1e-3), peers)};
    found.push_back({p.src, p.dst, std::min(p.rtt - base, p.rtt - peers) / thr, e, false});
  }
  return found;
}

std::vector<Diagnoser::PairFinding> Diagnoser::judge_losses(std::int64_t w) {
  const double end = static_cast<double>(w + 1) * window_s_;
  std::vector<PairFinding> found;
  if (loss_.size() > kMaxMeshNodes * kMaxMeshNodes) return found;
  for (auto& [key, track] : loss_) {
    auto v = take(track, w, 0);
    if (!v) continue;
    auto& recent = loss_recent_[key];
    recent.push_back(*v);
    if (recent.size() > kLossWindows) recent.pop_front();
    auto& normal = track.normal;
    double sum = 0, base = 0;
    for (double x : recent) sum += x;
    const double mean = sum / static_cast<double>(recent.size());
    for (double x : normal) base += x;
    base = normal.empty() ? 0 : base / static_cast<double>(normal.size());
    if (static_cast<int>(normal.size()) >= kMinBaseline && recent.size() == kLossWindows && mean >= kLossPct &&
        base < kLossBaselinePct) {
      DiagnosisEvidence e{"net/pair_loss", {{"src", key.first}, {"dst", key.second}}, end, mean, base, 0, 0,
                          fmt::format("{} -> {} lost {:.0f} % of its probes over the last {} windows (baseline "
                                      "{:.1f} %)", key.first, key.second, mean, kLossWindows, base)};
      found.push_back({key.first, key.second, mean / kLossPct, e, true});
    } else if (*v < kLossPct) {
      keep(normal, *v);
    }
  }
  return found;
}

// The abnormal pairs as culprits: all at one node, its NIC; else one or two links.
std::vector<Diagnoser::Verdict> Diagnoser::group_links(const std::vector<PairFinding>& found, std::size_t node_count) {
  if (found.empty()) return {};
  std::map<std::string, std::vector<const PairFinding*>> links;
  for (const auto& f : found) links[link_of(f.src, f.dst)].push_back(&f);
  std::map<std::string, int> degree;
  for (const auto& [link, fs] : links) degree[fs.front()->src]++, degree[fs.front()->dst]++;
  const auto [hub, deg] = *std::max_element(degree.begin(), degree.end(), [](auto& a, auto& b) { return a.second < b.second; });
  const int links_of_hub = static_cast<int>(node_count) - 1;
  const int others = static_cast<int>(links.size()) - deg;
  // The evidence: the strongest pairs, at most kMaxEvidence of them (a NIC of a large
  // cluster is abnormal on hundreds), and a line saying how many more.
  auto verdict_of = [](std::vector<const PairFinding*> fs, std::string cls, std::string component) {
    Verdict v{std::move(cls), std::move(component), "", 0, {}};
    bool loss = false, delay = false;
    std::stable_sort(fs.begin(), fs.end(), [](auto* a, auto* b) { return a->strength > b->strength; });
    for (const auto* f : fs) {
      v.strength = std::max(v.strength, f->strength);
      if (v.evidence.size() < kMaxEvidence) v.evidence.push_back(f->evidence);
      (f->loss ? loss : delay) = true;
    }
    if (fs.size() > kMaxEvidence) {
      DiagnosisEvidence more = fs.front()->evidence;
      more.text = fmt::format("and {} more pairs of {} like these", fs.size() - kMaxEvidence, v.component);
      v.evidence.push_back(more);
    }
    const std::string kind = v.cls == "nic" ? "NIC" : "link";
    v.what = loss && delay ? "slow, lossy " + kind : loss ? "lossy " + kind : "slow " + kind;
    return v;
  };
  if (deg >= 2 && 3 * deg >= 2 * links_of_hub && 3 * others <= deg) {
    std::vector<const PairFinding*> fs;
    for (const auto& f : found)
      if (f.src == hub || f.dst == hub) fs.push_back(&f);
    return {verdict_of(fs, "nic", hub)};
  }
  if (links.size() > 2) return {};  // spread over the network, no one place stands out
  std::vector<Verdict> out;
  for (const auto& [link, fs] : links) out.push_back(verdict_of(fs, "link", link));
  return out;
}

std::vector<Diagnoser::Verdict> Diagnoser::judge_links(std::int64_t w) {
  std::vector<PairFinding> found = judge_rtts(w);
  for (auto& f : judge_losses(w)) found.push_back(std::move(f));
  std::set<std::string> nodes;
  for (const auto& [key, t] : rtt_) nodes.insert(key.first), nodes.insert(key.second);
  for (const auto& [key, t] : loss_) nodes.insert(key.first), nodes.insert(key.second);
  return group_links(found, nodes.size());
}

std::map<std::string, Diagnoser::NodeCpu> Diagnoser::judge_nodes(std::int64_t w) {
  std::map<std::string, NodeCpu> out;
  for (auto& [node, track] : wait_) {
    NodeCpu& n = out[node];
    auto wait = take(track, w, 1);
    auto used = usage_.count(node) ? take(usage_[node], w, 1) : std::nullopt;
    if (!wait || !used) continue;
    n.wait_per_cpu = *wait / std::max(*used, 0.01);
    auto& normal = track.normal;
    if (static_cast<int>(normal.size()) >= kMinBaseline) n.baseline = common::median(normal);
    n.starved = n.baseline && *n.wait_per_cpu >= kStarved * std::max(*n.baseline, 0.05);
    if (!n.starved) keep(normal, *n.wait_per_cpu);
  }
  return out;
}

std::vector<Diagnoser::Verdict> Diagnoser::judge_ranks(std::int64_t w) {
  const double end = static_cast<double>(w + 1) * window_s_;
  auto nodes = judge_nodes(w);
  std::vector<std::pair<int, double>> now;
  bool fresh = false;
  for (auto& [rank, track] : compute_)
    if (auto v = take(track, w, kCarryWindows)) {
      now.emplace_back(rank, *v);
      fresh = fresh || track.carried == 0;
    }
  // A window in which no rank finished a step says nothing new (a slow step spans
  // several): the ranks' verdicts neither hold nor lapse in it.
  ranks_judged_ = fresh && now.size() >= 3 && now.size() <= kMaxRanks;
  if (!ranks_judged_) return {};
  std::vector<double> sorted;
  for (const auto& [r, v] : now) sorted.push_back(v);
  std::sort(sorted.begin(), sorted.end());
  std::optional<Verdict> worst;
  for (const auto& [rank, v] : now) {
    auto& normal = compute_[rank].normal;
    const double base = common::median(normal);
    const auto at = static_cast<std::size_t>(std::lower_bound(sorted.begin(), sorted.end(), v) - sorted.begin());
    const double peers = median_sorted_without(sorted, at);
    const bool ready = static_cast<int>(normal.size()) >= kMinBaseline && base > 0 && peers > 0;
    const double by_base = ready ? v / base : 0, by_peers = ready ? v / peers : 0;
    if (!ready || by_base < kStraggle || by_peers < kStraggle) {
      keep(normal, v);
      continue;
    }
    const double strength = std::min(by_base, by_peers) / kStraggle;
    if (worst && worst->strength >= strength) continue;
    const auto rn = rank_node_.find(rank);
    const std::string node = rn != rank_node_.end() ? rn->second : fmt::format("node{}", rank);
    DiagnosisEvidence e{"train/compute_time", {{"rank", static_cast<std::int64_t>(rank)}}, end, v, base, peers, 0,
                        fmt::format("rank {} computes a step in {:.1f} ms: {:.1f}x its baseline {:.1f} ms and {:.1f}x "
                                    "the other ranks' {:.1f} ms", rank, v, by_base, base, by_peers, peers)};
    Verdict verdict{"gpu", fmt::format("rank{}", rank), "slow device", strength, {e}};
    const NodeCpu& cpu = nodes[node];
    if (cpu.starved) {
      verdict.cls = "node", verdict.component = node, verdict.what = "CPU starved";
      verdict.evidence.push_back(
          {"node/cpu_wait", {{"node", node}}, end, *cpu.wait_per_cpu, *cpu.baseline, 0, 0,
           fmt::format("{}: {:.2f} threads waited for a CPU per CPU used, {:.1f}x its baseline {:.2f}", node,
                       *cpu.wait_per_cpu, *cpu.wait_per_cpu / std::max(*cpu.baseline, 0.05), *cpu.baseline)});
    } else if (cpu.wait_per_cpu) {
      verdict.evidence.push_back({"node/cpu_wait", {{"node", node}}, end, *cpu.wait_per_cpu, cpu.baseline.value_or(0), 0,
                                  0, fmt::format("{} is not short of CPU ({:.2f} threads waiting per CPU used, baseline "
                                                 "{:.2f}): the time goes in its device", node, *cpu.wait_per_cpu,
                                                 cpu.baseline.value_or(0))});
    }
    worst = std::move(verdict);
  }
  if (!worst) return {};
  return {*worst};
}

}  // namespace chaosbench::reports
