#include "faults/network/tc_plan.h"

#include <algorithm>
#include <arpa/inet.h>
#include <cmath>
#include <fmt/format.h>
#include <limits>
#include <stdexcept>

namespace chaosbench::faults {
namespace {

constexpr std::uint64_t kEthernetFrameBytes = 1514;  // 1500 MTU + 14 header
// netem keeps delay and jitter in 32-bit ticks of 64 ns (274 s); stay well inside.
constexpr std::uint32_t kMaxNetemDelayUs = 100'000'000;

std::uint32_t ipv4_host_order(const std::string& dotted, const char* what) {
  in_addr addr{};
  if (::inet_pton(AF_INET, dotted.c_str(), &addr) != 1)
    throw std::runtime_error(fmt::format("{} \"{}\" is not an IPv4 address (dotted quad)", what, dotted));
  return ntohl(addr.s_addr);
}

std::uint32_t probability(double p, const char* what) {
  if (!(p >= 0 && p <= 1)) throw std::runtime_error(fmt::format("netem {} {} is outside 0..1", what, p));
  return netem_probability(p);
}

NetemPlan plan_netem(const NetemSettings& s) {
  if (s.delay_us > kMaxNetemDelayUs || s.jitter_us > kMaxNetemDelayUs)
    throw std::runtime_error(fmt::format("netem delay and jitter are limited to {} s", kMaxNetemDelayUs / 1'000'000));
  if (s.limit == 0 || s.limit > static_cast<std::uint32_t>(std::numeric_limits<int>::max()))
    throw std::runtime_error("netem limit must be 1 packet or more");
  NetemPlan n;
  n.delay_us = s.delay_us;
  n.jitter_us = s.jitter_us;
  n.limit = s.limit;
  n.delay_correlation = probability(s.delay_correlation, "delay_correlation");
  n.loss = probability(s.loss, "loss");
  n.loss_correlation = probability(s.loss_correlation, "loss_correlation");
  n.duplicate = probability(s.duplicate, "duplicate");
  n.corrupt = probability(s.corrupt, "corrupt");
  n.reorder = probability(s.reorder, "reorder");
  n.reorder_correlation = probability(s.reorder_correlation, "reorder_correlation");
  n.normal_distribution = s.normal_distribution;
  // netem (and libnl, which refuses to send them) cannot do these; say so instead of
  // letting a setting silently do nothing.
  if (n.reorder && !n.delay_us) throw std::runtime_error("netem reordering needs a delay (reordered packets skip it)");
  if (n.reorder_correlation && !n.reorder) throw std::runtime_error("netem reorder_correlation needs reorder");
  if ((n.delay_correlation || n.normal_distribution) && !(n.delay_us && n.jitter_us))
    throw std::runtime_error("netem delay_correlation and the normal distribution need a delay and a jitter");
  if (n.loss_correlation && !n.loss) throw std::runtime_error("netem loss_correlation needs loss");
  return n;
}

}  // namespace

std::uint32_t netem_probability(double p) {
  if (!(p > 0)) return 0;
  if (p >= 1) return std::numeric_limits<std::uint32_t>::max();
  return static_cast<std::uint32_t>(std::llround(p * std::numeric_limits<std::uint32_t>::max()));
}

std::uint32_t shaper_burst_bytes(std::uint64_t rate_bytes_per_s) {
  // tc's own default (rate / psched HZ + MTU) is about one frame on kernels with
  // high-resolution timers: a bucket of ~0.1 ms or less, so every dequeue that runs late
  // (softirq on a busy core, timer slack) is sending time lost for good. One millisecond of
  // traffic absorbs that. Measured here (iperf3 TCP over veth, both cores busy): at 1 Gbit/s
  // a 1600 B burst gave 899 Mbit/s, 12.5 kB 944, 125 kB (1 ms) 945, the goodput ceiling
  // with headers; at 100 Mbit/s all gave 95.5. Two full frames keep a frame sendable at low
  // rates. A full bucket is a burst above the rate only after idle time: 1 ms, once.
  std::uint64_t burst = std::max(rate_bytes_per_s / 1000, 2 * kEthernetFrameBytes);
  burst = std::min(burst, rate_bytes_per_s * 60);
  return static_cast<std::uint32_t>(std::min<std::uint64_t>(burst, 1u << 30));
}

std::uint16_t shaper_filter_prio(const ShapeRule& rule, int id) {
  const int matches = (rule.match_src ? 1 : 0) + (rule.match_dst ? 1 : 0);
  const int band = 3 - matches;
  return static_cast<std::uint16_t>(band << 12 | id);
}

RulePlan plan_rule(const ShapeRule& rule, int id) {
  if (id < kShaperFirstId || id > kShaperLastId)
    throw std::runtime_error(fmt::format("rule id {} is outside {}..{}", id, kShaperFirstId, kShaperLastId));
  RulePlan plan;
  plan.id = id;
  plan.prio = shaper_filter_prio(rule, id);
  if (rule.match_src) plan.keys.push_back({ipv4_host_order(*rule.match_src, "match_src"), 0xFFFFFFFFu, kIpv4SrcOffset});
  if (rule.match_dst) plan.keys.push_back({ipv4_host_order(*rule.match_dst, "match_dst"), 0xFFFFFFFFu, kIpv4DstOffset});
  if (plan.keys.empty()) plan.keys.push_back({0, 0, 0});  // `match u32 0 0`: every IPv4 packet
  if (rule.rate_bytes_per_s && *rule.rate_bytes_per_s == 0) throw std::runtime_error("a rate must be above 0");
  plan.rate_bytes_per_s = rule.rate_bytes_per_s.value_or(kUnlimitedBytesPerSecond);
  if (rule.burst_bytes) {
    // htb stores the bucket as the time the rate takes to fill it, in 32-bit ticks.
    if (rule.burst_bytes > plan.rate_bytes_per_s * 60)
      throw std::runtime_error(fmt::format("a burst of {} bytes takes over 60 s at {} bytes/s", rule.burst_bytes,
                                           plan.rate_bytes_per_s));
    if (rule.burst_bytes > 1u << 30) throw std::runtime_error("a burst is limited to 1 GiB");
    plan.burst_bytes = rule.burst_bytes;
  } else {
    plan.burst_bytes = shaper_burst_bytes(plan.rate_bytes_per_s);
  }
  // htb's own quantum is rate / r2q (10); set it explicitly inside the bounds the kernel
  // otherwise warns about ("quantum of class is big"), and at least one full frame.
  plan.quantum_bytes = static_cast<std::uint32_t>(
      std::clamp<std::uint64_t>(plan.rate_bytes_per_s / 10, kEthernetFrameBytes, 200'000));
  if (rule.netem) plan.netem = plan_netem(*rule.netem);
  return plan;
}

}  // namespace chaosbench::faults
