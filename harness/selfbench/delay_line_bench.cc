// The delay-line self-benchmark (see delay_line_bench.h). Everything runs in a 2-node
// cluster of this process's own, with the fault a run would apply: network.delay on the
// link node 0 -> node 1, nfqueue backend (the delay line on the bridge's FORWARD hook).
//   latency:    ping node0 -> node1, median RTT with the line minus the median without
//               (measured just before and just after), against the delay asked;
//               effect error = |added - asked| / asked. ping prints 3 significant
//               digits (time=20.2 ms, time=100 ms): a resolution of 0.5% at 20 ms and
//               1% at 100 ms, well inside the 5% goal.
//   throughput: iperf3 -s -1 in node 1, iperf3 -c -J -t S in node 0, one TCP stream,
//               without the line and with it at --throughput-delay. TCP buffers are the
//               namespaces' defaults, copied from the host's at creation (nothing is set;
//               the JSON carries tcp_rmem and tcp_wmem). Here the sender's 4 MiB
//               tcp_wmem maximum, not the delay line, limits the 5 ms stream (~5 Gbit/s;
//               ~11 Gbit/s with 32 MiB set in the sender's namespace, tried by hand).
#include "harness/selfbench/delay_line_bench.h"

#include <algorithm>
#include <cmath>
#include <fmt/format.h>
#include <memory>
#include <nlohmann/json.hpp>
#include <regex>
#include <sstream>
#include <thread>
#include <vector>

#include "faults/network/delay_line.h"
#include "faults/network/impairment_fault.h"
#include "faults/network/network_plane.h"
#include "common/kernel/netns.h"
#include "common/values/percentile.h"
#include "harness/cluster/netns_cluster.h"
#include "harness/core/host_error.h"
#include "harness/core/run_stamps.h"

namespace chaosbench::harness {
namespace {

using namespace std::chrono_literals;
using common::run_in_netns;

constexpr double kMaxEffectErrorPct = 5.0;
constexpr double kMinGbitPerS = 1.0;

struct LatencyResult {
  double asked_ms = 0;
  int pings = 0, received = 0;
  double baseline_median_ms = NAN, median_ms = NAN, added_ms = NAN, effect_error_pct = NAN;
  double held_mean_us = 0, held_error_mean_us = 0;  // the delay line's own account
  bool ok() const { return effect_error_pct <= kMaxEffectErrorPct; }
};

struct ThroughputResult {
  double delay_ms = 0;  // 0: no delay line at all (the baseline)
  double seconds = 0;
  double gbit_per_s = NAN;
  long retransmits = 0;
  std::string tcp_rmem, tcp_wmem;  // the receiver's and the sender's, as found
  std::string error;
  bool goal() const { return delay_ms > 0; }
  bool ok() const { return !goal() || gbit_per_s >= kMinGbitPerS; }
};

// The 2-node cluster and the plane a network fault acts on.
struct BenchNet {
  NetnsCluster cluster{2, make_run_id()};  // HostError (exit 3) without root
  faults::NetworkPlane plane{cluster.bridge_netns_fd(),
                             {{cluster.node_netns_fd(0), cluster.address(0), NetnsCluster::bridge_port(0)},
                              {cluster.node_netns_fd(1), cluster.address(1), NetnsCluster::bridge_port(1)}},
                             NetnsCluster::kNodeInterface, 1};
  faults::NullUndoLog log;
};

// network.delay on the link node 0 -> node 1 with the nfqueue backend, exactly as a run
// applies it (the delay line on the bridge's FORWARD hook), for the life of this object.
class DelayFault {
 public:
  DelayFault(BenchNet& net, double delay_ms) : fault_(impairment(delay_ms), faults::Direction::kEgress, "nfqueue") {
    faults::ResolvedTarget t;
    t.links = {{0, 1}};
    t.nodes = {0, 1};
    t.network = &net.plane;
    try {
      fault_.apply(t, net.log);
    } catch (const std::exception& e) {
      throw HostError(e.what());
    }
  }
  ~DelayFault() {
    try {
      fault_.revert();
    } catch (...) {
    }
  }
  DelayFault(const DelayFault&) = delete;
  DelayFault& operator=(const DelayFault&) = delete;
  faults::DelayLineStats stats() const { return fault_.delay_line_stats(); }

 private:
  static faults::Impairment impairment(double delay_ms) {
    faults::Impairment imp;
    imp.delay = std::chrono::nanoseconds(std::llround(delay_ms * 1e6));
    return imp;
  }
  faults::ImpairmentFault fault_;
};

// Per-reply RTTs of `count` pings from node 0 to node 1, 20 ms apart.
std::vector<double> ping_rtts(const NetnsCluster& c, int count) {
  auto r = common::run_in_netns(c.node_netns_fd(0),
                        {"ping", "-n", "-c", std::to_string(count), "-i", "0.02", "-W", "2", c.address(1)}, 60s);
  if (r.exit_code < 0) throw HostError("ping did not run (is it installed?): " + r.err);
  std::vector<double> rtts;
  static const std::regex kTime(R"(time=([\d.]+) ms)");
  for (std::sregex_iterator it(r.out.begin(), r.out.end(), kTime), end; it != end; ++it) rtts.push_back(std::stod((*it)[1]));
  return rtts;
}

LatencyResult measure_latency(BenchNet& net, double delay_ms, int pings) {
  const NetnsCluster& c = net.cluster;
  LatencyResult r;
  r.asked_ms = delay_ms;
  r.pings = pings;
  // The baseline is the median of pings just before and just after, so a noisy moment
  // (the kernel still tearing down an earlier run's namespaces) weighs half as much.
  std::vector<double> baseline = ping_rtts(c, pings);
  std::vector<double> rtts;
  faults::DelayLineStats stats;
  {
    DelayFault fault(net, delay_ms);
    rtts = ping_rtts(c, pings);
    stats = fault.stats();
  }
  auto after = ping_rtts(c, pings);
  baseline.insert(baseline.end(), after.begin(), after.end());
  r.baseline_median_ms = common::median(baseline);
  r.received = static_cast<int>(rtts.size());
  r.median_ms = common::median(rtts);
  r.added_ms = r.median_ms - r.baseline_median_ms;
  r.effect_error_pct = std::abs(r.added_ms - delay_ms) / delay_ms * 100;
  r.held_mean_us = stats.held_mean_us;
  r.held_error_mean_us = stats.held_error_mean_us;
  return r;
}

// "4096 131072 6291456": a namespace's sysctl, tabs as spaces, for the record.
std::string sysctl_value(int netns_fd, const char* name) {
  std::string v = common::run_in_netns(netns_fd, {"sysctl", "-n", name}, 5s).out;
  std::replace(v.begin(), v.end(), '\t', ' ');
  v.erase(std::remove(v.begin(), v.end(), '\n'), v.end());
  return v;
}

ThroughputResult measure_throughput(BenchNet& net, double delay_ms, int seconds) {
  const NetnsCluster& c = net.cluster;
  ThroughputResult r;
  r.delay_ms = delay_ms;
  r.seconds = seconds;
  r.tcp_rmem = sysctl_value(c.node_netns_fd(1), "net.ipv4.tcp_rmem");
  r.tcp_wmem = sysctl_value(c.node_netns_fd(0), "net.ipv4.tcp_wmem");
  std::unique_ptr<DelayFault> fault;
  if (delay_ms > 0) fault = std::make_unique<DelayFault>(net, delay_ms);
  // The server serves one test and exits; the client retries while it is not yet listening.
  const auto limit = std::chrono::seconds(seconds + 20);
  std::thread server([&] { common::run_in_netns(c.node_netns_fd(1), {"iperf3", "-s", "-1", "-B", c.address(1)}, limit); });
  common::CommandOutput client;
  for (int attempt = 0; attempt < 20; ++attempt) {
    std::this_thread::sleep_for(150ms);
    client = common::run_in_netns(c.node_netns_fd(0), {"iperf3", "-c", c.address(1), "-t", std::to_string(seconds), "-J"}, limit);
    if (client.exit_code == 0 || client.out.find("Connection refused") == std::string::npos) break;
  }
  server.join();
  fault.reset();
  try {
    auto json = nlohmann::json::parse(client.out);
    if (json.contains("error")) r.error = json["error"].get<std::string>();
    r.gbit_per_s = json.at("end").at("sum_received").at("bits_per_second").get<double>() / 1e9;
    r.retransmits = json.at("end").at("sum_sent").value("retransmits", 0L);
  } catch (const std::exception& e) {
    if (r.error.empty()) r.error = fmt::format("iperf3 gave no result (exit {}): {}", client.exit_code, client.err);
  }
  return r;
}

nlohmann::ordered_json to_json(const LatencyResult& r) {
  auto num = [](double v) { return std::isfinite(v) ? nlohmann::ordered_json(v) : nlohmann::ordered_json(nullptr); };
  return {{"benchmark", "delay_line"},     {"measurement", "latency"},
          {"delay_ms", r.asked_ms},        {"pings", r.pings},
          {"received", r.received},        {"baseline_median_ms", num(r.baseline_median_ms)},
          {"median_ms", num(r.median_ms)}, {"added_ms", num(r.added_ms)},
          {"effect_error_pct", num(r.effect_error_pct)},
          {"held_mean_us", r.held_mean_us}, {"held_error_mean_us", r.held_error_mean_us},
          {"goal_effect_error_pct_max", kMaxEffectErrorPct}, {"goal_met", r.ok()}};
}

nlohmann::ordered_json to_json(const ThroughputResult& r) {
  nlohmann::ordered_json j = {{"benchmark", "delay_line"},
                              {"measurement", "throughput"},
                              {"delay_ms", r.delay_ms},
                              {"delay_line", r.delay_ms > 0},
                              {"seconds", r.seconds},
                              {"gbit_per_s", std::isfinite(r.gbit_per_s) ? nlohmann::ordered_json(r.gbit_per_s) : nullptr},
                              {"retransmits", r.retransmits},
                              {"tcp_rmem", r.tcp_rmem},
                              {"tcp_wmem", r.tcp_wmem}};
  if (r.goal()) {
    j["goal_gbit_per_s_min"] = kMinGbitPerS;
    j["goal_met"] = r.ok();
  }
  if (!r.error.empty()) j["error"] = r.error;
  return j;
}

void print_table(std::ostream& out, const std::vector<LatencyResult>& latency, const std::vector<ThroughputResult>& tput) {
  out << fmt::format("\n{:>9} {:>12} {:>10} {:>10} {:>9} {:>12} {:>6}\n", "delay ms", "baseline ms", "median ms",
                     "added ms", "error %", "held err us", "goal");
  for (const auto& r : latency)
    out << fmt::format("{:>9.1f} {:>12.3f} {:>10.3f} {:>10.3f} {:>9.2f} {:>12.1f} {:>6}\n", r.asked_ms,
                       r.baseline_median_ms, r.median_ms, r.added_ms, r.effect_error_pct, r.held_error_mean_us,
                       r.ok() ? "ok" : "MISS");
  out << fmt::format("effect error goal: <= {:.0f}% at every delay\n\n", kMaxEffectErrorPct);
  out << fmt::format("{:>24} {:>10} {:>8} {:>6}\n", "iperf3, one TCP stream", "Gbit/s", "retrans", "goal");
  for (const auto& r : tput)
    out << fmt::format("{:>24} {:>10.2f} {:>8} {:>6}{}\n",
                       r.delay_ms > 0 ? fmt::format("delay line, {:g} ms", r.delay_ms) : "no delay line",
                       r.gbit_per_s, r.retransmits, r.goal() ? (r.ok() ? "ok" : "MISS") : "-",
                       r.error.empty() ? "" : "  (" + r.error + ")");
  out << fmt::format("throughput goal: >= {:.0f} Gbit/s through the delay line\n", kMinGbitPerS);
}

}  // namespace

bool run_delay_line_bench(const DelayLineBenchOptions& options, std::ostream& out) {
  const auto& delays = options.delays_ms;
  const int pings = options.pings, seconds = options.seconds;
  const double tput_delay = options.throughput_delay_ms;
  BenchNet net;
  ping_rtts(net.cluster, 10);  // warm-up: ARP, caches; not measured
  std::vector<LatencyResult> latency;
  std::vector<ThroughputResult> throughput;
  for (double d : delays) {
    latency.push_back(measure_latency(net, d, pings));
    out << to_json(latency.back()).dump() << std::endl;
  }
  if (seconds > 0) {
    for (double d : {0.0, tput_delay}) {
      throughput.push_back(measure_throughput(net, d, seconds));
      out << to_json(throughput.back()).dump() << std::endl;
    }
  }
  print_table(out, latency, throughput);
  const bool ok = std::all_of(latency.begin(), latency.end(), [](const auto& r) { return r.ok(); }) &&
                  std::all_of(throughput.begin(), throughput.end(), [](const auto& r) { return r.ok(); });
  return ok;
}

}  // namespace chaosbench::harness
