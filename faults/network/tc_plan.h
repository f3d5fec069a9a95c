// What the tc shaper asks of the kernel for one rule, as plain values: the htb class
// (rate, burst, quantum), the netem settings in the kernel's raw units, and the u32
// filter (priority, keys). Pure, so it is unit-tested without root; tc_shaper.cc sends a
// plan through libnl, and tc_commands.h spells the same change as `tc` command lines.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "faults/network/tc_shaper.h"

namespace chaosbench::faults {

// The shaper's root is htb 1:; rule N is class 1:N with netem N: under it. Ids start at 2
// so that no netem handle N: can be the root's 1:, and stay below 0x1000 so that the
// filter priority can carry a specificity band above them (shaper_filter_prio).
inline constexpr std::uint32_t kShaperRootMajor = 1;
inline constexpr int kShaperFirstId = 2;
inline constexpr int kShaperLastId = 0xFFF;

// "Unlimited" rules (netem only) still need an htb rate: 100 Gbit/s, far above what a
// veth carries (~11 Gbit/s here), so the class never holds a packet back.
inline constexpr std::uint64_t kUnlimitedBytesPerSecond = 100'000'000'000ull / 8;

// One u32 match: the 32-bit word at `offset` bytes into the IPv4 header, masked, equals
// `value` (host byte order; libnl's rtnl_u32_add_key_uint32 converts).
struct U32Key {
  std::uint32_t value = 0;
  std::uint32_t mask = 0;
  int offset = 0;
  bool operator==(const U32Key&) const = default;
};
inline constexpr int kIpv4SrcOffset = 12;
inline constexpr int kIpv4DstOffset = 16;

// netem's parameters as the kernel takes them: times in microseconds (libnl converts them
// to ticks), probabilities as 32-bit fractions of UINT32_MAX.
struct NetemPlan {
  std::uint32_t delay_us = 0;
  std::uint32_t jitter_us = 0;
  std::uint32_t limit = 0;
  std::uint32_t delay_correlation = 0;
  std::uint32_t loss = 0;
  std::uint32_t loss_correlation = 0;
  std::uint32_t duplicate = 0;
  std::uint32_t corrupt = 0;
  std::uint32_t reorder = 0;
  std::uint32_t reorder_correlation = 0;
  bool normal_distribution = false;
};

struct RulePlan {
  int id = 0;                        // class 1:id, netem handle id:
  std::uint16_t prio = 0;            // u32 filter priority (never 0: 0 means "every filter")
  std::uint64_t rate_bytes_per_s = 0;  // htb rate and ceil (kUnlimitedBytesPerSecond when none)
  std::uint32_t burst_bytes = 0;     // htb burst and cburst
  std::uint32_t quantum_bytes = 0;
  std::vector<U32Key> keys;          // never empty: match-all is one 0/0 key
  std::optional<NetemPlan> netem;
};

// round(p * UINT32_MAX), as iproute2's get_percent; p in 0..1.
std::uint32_t netem_probability(double p);

// The burst for a rate when the rule names none: 1 ms of traffic at the rate, at least two
// full Ethernet frames, and at most 60 s of traffic (htb keeps it in 32-bit ticks).
std::uint32_t shaper_burst_bytes(std::uint64_t rate_bytes_per_s);

// u32 priority: lower is tried first. More specific rules come first whatever their order
// of addition -- band 1 matches src and dst, band 2 one of them, band 3 everything -- and
// within a band the lower id: prio = band << 12 | id. Every rule has its own priority, so
// removing one (RTM_DELTFILTER by priority) never touches another.
std::uint16_t shaper_filter_prio(const ShapeRule& rule, int id);

// The whole plan for rule `id`. Throws std::runtime_error for input the kernel would
// refuse or misread (a malformed address, a probability outside 0..1, reordering without
// delay, a correlation without what it correlates, a zero rate, an id out of range).
RulePlan plan_rule(const ShapeRule& rule, int id);

}  // namespace chaosbench::faults
