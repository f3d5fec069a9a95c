// The shaper's plan without root: what each rule asks of the kernel (probabilities in
// netem's raw 32-bit form, bursts, filter priorities, u32 keys) and its tc spelling.
#include <catch2/catch.hpp>

#include <cstdint>

#include "faults/network/tc_commands.h"
#include "faults/network/tc_plan.h"

namespace tc_plan_test {  // this file's names, apart in a unity batch (tests/CMakeLists.txt)

using namespace chaosbench::faults;

namespace {

ShapeRule rule_to(const char* dst, std::optional<std::uint64_t> rate = std::nullopt) {
  ShapeRule r;
  r.match_dst = dst;
  r.rate_bytes_per_s = rate;
  return r;
}

std::string joined(const Argv& argv) {
  std::string out;
  for (const auto& a : argv) out += (out.empty() ? "" : " ") + a;
  return out;
}

}  // namespace

TEST_CASE("tc plan: netem probabilities are the kernel's 32-bit fractions", "[tc-plan]") {
  CHECK(netem_probability(0) == 0u);
  CHECK(netem_probability(1) == 0xFFFFFFFFu);
  CHECK(netem_probability(0.5) == 0x80000000u);           // round(0.5 * (2^32 - 1))
  CHECK(netem_probability(0.01) == 42949673u);            // iproute2: "loss 1%"
  CHECK(netem_probability(1e-12) == 0u);
  ShapeRule r;
  r.netem = NetemSettings{};
  r.netem->loss = 0.25;
  r.netem->duplicate = 1;
  auto plan = plan_rule(r, 2);
  REQUIRE(plan.netem);
  CHECK(plan.netem->loss == 1073741824u);
  CHECK(plan.netem->duplicate == 0xFFFFFFFFu);
  CHECK(plan.netem->limit == 100000u);
}

TEST_CASE("tc plan: bursts suit the rate, quantums stay where htb does not warn", "[tc-plan]") {
  CHECK(shaper_burst_bytes(100'000'000 / 8) == 12500u);    // 1 ms at 100 Mbit/s
  CHECK(shaper_burst_bytes(1'000'000 / 8) == 3028u);       // two full frames
  CHECK(shaper_burst_bytes(kUnlimitedBytesPerSecond) == 12'500'000u);
  CHECK(shaper_burst_bytes(10) == 600u);                   // at most 60 s of traffic
  CHECK(plan_rule(rule_to("10.0.0.2", 100'000'000 / 8), 2).quantum_bytes == 200'000u);
  CHECK(plan_rule(rule_to("10.0.0.2", 1'000'000 / 8), 2).quantum_bytes == 12'500u);
  CHECK(plan_rule(rule_to("10.0.0.2", 1000), 2).quantum_bytes == 1514u);
  auto chosen = rule_to("10.0.0.2", 1'000'000);
  chosen.burst_bytes = 50'000;
  CHECK(plan_rule(chosen, 2).burst_bytes == 50'000u);
  auto unlimited = plan_rule(ShapeRule{}, 2);
  CHECK(unlimited.rate_bytes_per_s == kUnlimitedBytesPerSecond);
}

TEST_CASE("tc plan: u32 keys and priorities (more specific rules first)", "[tc-plan]") {
  ShapeRule both;
  both.match_src = "10.1.2.3";
  both.match_dst = "10.1.2.4";
  auto plan = plan_rule(both, 7);
  CHECK(plan.keys == std::vector<U32Key>{{0x0A010203u, 0xFFFFFFFFu, 12}, {0x0A010204u, 0xFFFFFFFFu, 16}});
  CHECK(plan.prio == 0x1007);
  CHECK(plan_rule(rule_to("10.1.2.4"), 7).prio == 0x2007);
  auto all = plan_rule(ShapeRule{}, 2);
  CHECK(all.keys == std::vector<U32Key>{{0, 0, 0}});
  CHECK(all.prio == 0x3002);
  // A later, more specific rule still wins over an earlier match-all one.
  CHECK(shaper_filter_prio(rule_to("10.1.2.4"), kShaperLastId) < shaper_filter_prio(ShapeRule{}, kShaperFirstId));
}

TEST_CASE("tc plan: input the kernel would refuse or misread is an error", "[tc-plan]") {
  CHECK_THROWS_WITH(plan_rule(rule_to("10.0.0.256"), 2), Catch::Contains("not an IPv4 address"));
  CHECK_THROWS_WITH(plan_rule(rule_to("fe80::1"), 2), Catch::Contains("not an IPv4 address"));
  CHECK_THROWS_WITH(plan_rule(rule_to("10.0.0.2", 0), 2), Catch::Contains("above 0"));
  CHECK_THROWS_WITH(plan_rule(ShapeRule{}, 1), Catch::Contains("outside"));
  CHECK_THROWS_WITH(plan_rule(ShapeRule{}, kShaperLastId + 1), Catch::Contains("outside"));
  auto netem = [](auto edit) {
    ShapeRule r;
    r.netem = NetemSettings{};
    edit(*r.netem);
    return r;
  };
  CHECK_THROWS_WITH(plan_rule(netem([](NetemSettings& n) { n.loss = 1.5; }), 2), Catch::Contains("outside 0..1"));
  CHECK_THROWS_WITH(plan_rule(netem([](NetemSettings& n) { n.loss = -0.1; }), 2), Catch::Contains("outside 0..1"));
  CHECK_THROWS_WITH(plan_rule(netem([](NetemSettings& n) { n.reorder = 0.1; }), 2), Catch::Contains("needs a delay"));
  CHECK_THROWS_WITH(plan_rule(netem([](NetemSettings& n) { n.loss_correlation = 0.5; }), 2),
                    Catch::Contains("needs loss"));
  CHECK_THROWS_WITH(plan_rule(netem([](NetemSettings& n) {
                      n.delay_us = 1000;
                      n.delay_correlation = 0.5;
                    }),
                              2),
                    Catch::Contains("jitter"));
  CHECK_THROWS_WITH(plan_rule(netem([](NetemSettings& n) { n.limit = 0; }), 2), Catch::Contains("limit"));
  CHECK_NOTHROW(plan_rule(netem([](NetemSettings& n) {
                  n.delay_us = 20'000;
                  n.reorder = 0.25;
                }),
                          2));
}

TEST_CASE("tc plan: the same change as tc command lines", "[tc-plan]") {
  auto plan = plan_rule(rule_to("10.64.3.2", 100'000'000 / 8), 10);
  auto add = tc_add_commands(plan, "eth0", true);
  REQUIRE(add.size() == 3);
  CHECK(joined(add[0]) == "tc qdisc add dev eth0 root handle 1: htb");
  CHECK(joined(add[1]) ==
        "tc class add dev eth0 parent 1: classid 1:a htb rate 100000000bit ceil 100000000bit burst 12500b "
        "cburst 12500b quantum 200000");
  CHECK(joined(add[2]) == "tc filter add dev eth0 parent 1: protocol ip prio 8202 u32 match ip dst 10.64.3.2/32 flowid 1:a");
  CHECK(tc_add_commands(plan, "eth0", false).size() == 2);
  auto last = tc_remove_commands(plan, "eth0", true);
  REQUIRE(last.size() == 1);
  CHECK(joined(last[0]) == "tc qdisc del dev eth0 root handle 1: htb");
  auto one = tc_remove_commands(plan, "eth0", false);
  REQUIRE(one.size() == 2);
  CHECK(joined(one[0]) == "tc filter del dev eth0 parent 1: protocol ip prio 8202");
  CHECK(joined(one[1]) == "tc class del dev eth0 classid 1:a");

  ShapeRule r;
  r.netem = NetemSettings{};
  r.netem->delay_us = 20'000;
  r.netem->jitter_us = 2'000;
  r.netem->loss = 0.01;
  auto netem = tc_add_commands(plan_rule(r, 3), "n1", false);
  REQUIRE(netem.size() == 3);
  CHECK(joined(netem[1]) == "tc qdisc add dev n1 parent 1:3 handle 3: netem limit 100000 delay 20000us 2000us loss 1.0000000%");
  CHECK(joined(netem[2]) == "tc filter add dev n1 parent 1: protocol ip prio 12291 u32 match u32 0x0 0x0 at 0 flowid 1:3");
}

}  // namespace tc_plan_test
