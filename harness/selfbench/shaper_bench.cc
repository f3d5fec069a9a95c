// Each repetition times, on node 0's eth0 (interleaved, so drift hits both alike):
//   netlink  apply:  TcShaper construction (socket, link lookup) + add(rate rule, dst match)
//            revert: remove() (one RTM_DELQDISC for the root) + destruction
//   tc       apply:  tc qdisc add ... root handle 1: htb; tc class add ...; tc filter add ...
//            revert: tc qdisc del ... root handle 1: htb
// The tc lines come from tc_commands.h for the very plan the shaper sends, and the first
// repetition checks that `tc ... show` prints the same for both.
#include "harness/selfbench/shaper_bench.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <fmt/format.h>
#include <memory>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <vector>

#include "common/kernel/netns.h"
#include "common/values/percentile.h"
#include "faults/network/tc_commands.h"
#include "faults/network/tc_shaper.h"
#include "harness/cluster/netns_cluster.h"
#include "harness/core/run_stamps.h"

namespace chaosbench::harness {
namespace {

using Clock = std::chrono::steady_clock;
constexpr double kGoalApplyP99Ms = 2.0;
constexpr std::uint64_t kRateBytesPerSecond = 100'000'000 / 8;

double ms_since(Clock::time_point start) {
  return std::chrono::duration<double, std::milli>(Clock::now() - start).count();
}

// As perf/harness/fault_apply_latency.sh and every report (common/values/percentile.h).
using common::percentile;

struct Series {
  std::vector<double> apply_ms, revert_ms;
  nlohmann::ordered_json summary() const {
    return {{"apply_p50_ms", percentile(apply_ms, 50)},
            {"apply_p99_ms", percentile(apply_ms, 99)},
            {"revert_p50_ms", percentile(revert_ms, 50)},
            {"revert_p99_ms", percentile(revert_ms, 99)}};
  }
};

void run_tc(int netns_fd, const std::vector<faults::Argv>& commands) {
  for (const auto& argv : commands) {
    auto r = common::run_in_netns(netns_fd, argv, std::chrono::seconds(5));
    if (r.exit_code != 0) throw std::runtime_error(fmt::format("{}: {}", fmt::join(argv, " "), r.err));
  }
}

// What `tc` shows of the interface's qdiscs, classes and filters.
std::string tc_show(int netns_fd) {
  std::string out;
  for (const char* object : {"qdisc", "class", "filter"})
    out += common::run_in_netns(netns_fd, {"tc", object, "show", "dev", NetnsCluster::kNodeInterface},
                                std::chrono::seconds(5)).out;
  return out;
}

std::string table(const nlohmann::ordered_json& j) {
  auto row = [](const char* name, const nlohmann::ordered_json& s) {
    return fmt::format("{:<18}{:>11.3f} ms{:>11.3f} ms{:>11.3f} ms{:>11.3f} ms\n", name, s["apply_p50_ms"].get<double>(),
                       s["apply_p99_ms"].get<double>(), s["revert_p50_ms"].get<double>(),
                       s["revert_p99_ms"].get<double>());
  };
  std::string out = fmt::format("shaper apply/revert, {} repetitions (rate rule with a dst match, node 0 eth0)\n",
                                j["repeat"].get<int>());
  out += fmt::format("{:<18}{:>14}{:>14}{:>14}{:>14}\n", "", "apply p50", "apply p99", "revert p50", "revert p99");
  out += row("netlink (libnl)", j["netlink"]);
  out += row("tc commands", j["tc"]);
  out += fmt::format("{:<18}{:>13.1f}x{:>13.1f}x{:>13.1f}x{:>13.1f}x\n", "tc / netlink", j["apply_p50_ratio"].get<double>(),
                     j["apply_p99_ratio"].get<double>(), j["revert_p50_ratio"].get<double>(),
                     j["revert_p99_ratio"].get<double>());
  out += fmt::format("goal: netlink apply p99 < {} ms: {}{}\n", kGoalApplyP99Ms,
                     j["goal_met"].get<bool>() ? "met" : "NOT met",
                     j["same_change"].get<bool>() ? "" : "  (warning: tc show differed between the two)");
  return out;
}

}  // namespace

void run_shaper_bench(const ShaperBenchOptions& options, std::ostream& out) {
  const int repeat = options.repeat, warmup = options.warmup;
  NetnsCluster cluster(2, make_run_id());  // throws HostError (exit 3) without root
  const int ns = cluster.node_netns_fd(0);
  faults::ShapeRule rule;
  rule.match_dst = cluster.address(1);
  rule.rate_bytes_per_s = kRateBytesPerSecond;
  // The shaper's first rule is id kShaperFirstId: the tc lines make the same objects.
  const faults::RulePlan plan = faults::plan_rule(rule, faults::kShaperFirstId);
  const auto tc_apply = faults::tc_add_commands(plan, NetnsCluster::kNodeInterface, true);
  const auto tc_revert = faults::tc_remove_commands(plan, NetnsCluster::kNodeInterface, true);

  Series netlink, tc;
  bool same_change = true;
  for (int i = -warmup; i < repeat; ++i) {
    auto start = Clock::now();
    auto shaper = std::make_unique<faults::TcShaper>(ns, NetnsCluster::kNodeInterface);
    const int id = shaper->add(rule);
    const double netlink_apply = ms_since(start);
    const std::string netlink_show = i == 0 ? tc_show(ns) : "";
    start = Clock::now();
    shaper->remove(id);
    shaper.reset();
    const double netlink_revert = ms_since(start);

    start = Clock::now();
    run_tc(ns, tc_apply);
    const double tc_apply_ms = ms_since(start);
    if (i == 0) same_change = tc_show(ns) == netlink_show;
    start = Clock::now();
    run_tc(ns, tc_revert);
    const double tc_revert_ms = ms_since(start);
    if (i < 0) continue;
    netlink.apply_ms.push_back(netlink_apply);
    netlink.revert_ms.push_back(netlink_revert);
    tc.apply_ms.push_back(tc_apply_ms);
    tc.revert_ms.push_back(tc_revert_ms);
  }

  nlohmann::ordered_json j;
  j["benchmark"] = "shaper";
  j["repeat"] = repeat;
  j["netlink"] = netlink.summary();
  j["tc"] = tc.summary();
  for (const char* key : {"apply_p50", "apply_p99", "revert_p50", "revert_p99"})
    j[std::string(key) + "_ratio"] = j["tc"][std::string(key) + "_ms"].get<double>() /
                                     j["netlink"][std::string(key) + "_ms"].get<double>();
  j["goal_apply_p99_ms"] = kGoalApplyP99Ms;
  j["goal_met"] = j["netlink"]["apply_p99_ms"].get<double>() < kGoalApplyP99Ms;
  j["same_change"] = same_change;
  out << j.dump() << "\n" << table(j);
}

}  // namespace chaosbench::harness
