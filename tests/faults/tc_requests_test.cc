// The shaper's netlink requests decoded the way the kernel reads them, without root. This
// is where the netem message is checked on a kernel without sch_netem: the qopt times in
// psched ticks (PSCHED_TICKS2NS: ticks << 6), the raw 32-bit probabilities, and the
// attributes netem expects inside TCA_OPTIONS after its struct.
#include <catch2/catch.hpp>

#include <arpa/inet.h>
#include <cstring>
#include <linux/pkt_cls.h>
#include <linux/pkt_sched.h>
#include <linux/rtnetlink.h>
#include <map>
#include <string>
#include <vector>

#include "faults/network/tc_requests.h"

namespace tc_requests_test {  // this file's names, apart in a unity batch (tests/CMakeLists.txt)

using namespace chaosbench::faults;

namespace {

struct Attr {
  const std::uint8_t* data = nullptr;
  std::size_t len = 0;
  template <class T>
  T as() const {
    REQUIRE(len >= sizeof(T));
    T v;
    std::memcpy(&v, data, sizeof v);
    return v;
  }
};

// Walks the rtattrs in [p, p + len); the last of each type wins.
std::map<int, Attr> attrs(const std::uint8_t* p, std::size_t len) {
  std::map<int, Attr> out;
  while (len >= sizeof(rtattr)) {
    rtattr a;
    std::memcpy(&a, p, sizeof a);
    REQUIRE(a.rta_len >= sizeof(rtattr));
    REQUIRE(a.rta_len <= len);
    out[a.rta_type & NLA_TYPE_MASK] = {p + RTA_LENGTH(0), a.rta_len - RTA_LENGTH(0)};
    const std::size_t step = std::min<std::size_t>(RTA_ALIGN(a.rta_len), len);
    p += step;
    len -= step;
  }
  return out;
}

struct Decoded {
  std::vector<std::uint8_t> bytes;
  nlmsghdr hdr{};
  tcmsg tc{};
  std::map<int, Attr> top;
};

Decoded decode(std::vector<std::uint8_t> bytes) {
  Decoded d;
  d.bytes = std::move(bytes);
  REQUIRE(d.bytes.size() >= NLMSG_LENGTH(sizeof(tcmsg)));
  std::memcpy(&d.hdr, d.bytes.data(), sizeof d.hdr);
  REQUIRE(d.hdr.nlmsg_len == d.bytes.size());
  std::memcpy(&d.tc, d.bytes.data() + NLMSG_HDRLEN, sizeof d.tc);
  const std::size_t at = NLMSG_SPACE(sizeof(tcmsg));
  d.top = attrs(d.bytes.data() + at, d.bytes.size() - at);
  return d;
}

std::string kind(const Decoded& d) {
  const Attr& a = d.top.at(TCA_KIND);
  return std::string(reinterpret_cast<const char*>(a.data), ::strnlen(reinterpret_cast<const char*>(a.data), a.len));
}

constexpr std::uint64_t ticks_to_ns(std::uint32_t ticks) { return std::uint64_t{ticks} << 6; }  // PSCHED_SHIFT

}  // namespace

TEST_CASE("tc requests: the netem message is what sch_netem parses", "[tc-plan]") {
  ShapeRule r;
  r.match_dst = "10.1.2.3";
  r.netem = NetemSettings{};
  NetemSettings& n = *r.netem;
  n.delay_us = 20'000;
  n.jitter_us = 2'000;
  n.delay_correlation = 0.25;
  n.loss = 0.01;
  n.loss_correlation = 0.5;
  n.duplicate = 0.02;
  n.corrupt = 0.03;
  n.reorder = 0.1;
  n.reorder_correlation = 0.2;
  n.limit = 5000;
  const RulePlan plan = plan_rule(r, 5);
  const Decoded d = decode(tc_add_request_bytes(plan, 7, TcRequest::kNetem));
  CHECK(d.hdr.nlmsg_type == RTM_NEWQDISC);
  CHECK((d.hdr.nlmsg_flags & (NLM_F_CREATE | NLM_F_EXCL)) == (NLM_F_CREATE | NLM_F_EXCL));
  CHECK_FALSE(d.hdr.nlmsg_flags & NLM_F_REPLACE);
  CHECK(d.tc.tcm_ifindex == 7);
  CHECK(d.tc.tcm_parent == TC_H_MAKE(1u << 16, 5u));  // class 1:5
  CHECK(d.tc.tcm_handle == TC_H_MAKE(5u << 16, 0u));  // netem 5:
  CHECK(kind(d) == "netem");

  // netem's TCA_OPTIONS: struct tc_netem_qopt, then attributes, all inside its length
  // (sch_netem.c parse_attr), up to the end of the message.
  const Attr& options = d.top.at(TCA_OPTIONS);
  CHECK(options.data + options.len == d.bytes.data() + d.bytes.size());
  const auto qopt = options.as<tc_netem_qopt>();
  CHECK(ticks_to_ns(qopt.latency) == 20'000'000u);
  CHECK(ticks_to_ns(qopt.jitter) == 2'000'000u);
  CHECK(qopt.limit == 5000u);
  CHECK(qopt.loss == 42949673u);  // 1% of 2^32 - 1, rounded
  CHECK(qopt.duplicate == netem_probability(0.02));
  CHECK(qopt.gap == 1u);  // reordering: every packet a candidate (tc sets the same)
  auto nested = attrs(options.data + RTA_ALIGN(sizeof(tc_netem_qopt)), options.len - RTA_ALIGN(sizeof(tc_netem_qopt)));
  const auto corr = nested.at(TCA_NETEM_CORR).as<tc_netem_corr>();
  CHECK(corr.delay_corr == 0x40000000u);
  CHECK(corr.loss_corr == 0x80000000u);
  CHECK(corr.dup_corr == 0u);
  const auto reorder = nested.at(TCA_NETEM_REORDER).as<tc_netem_reorder>();
  CHECK(reorder.probability == netem_probability(0.1));
  CHECK(reorder.correlation == netem_probability(0.2));
  CHECK(nested.at(TCA_NETEM_CORRUPT).as<tc_netem_corrupt>().probability == netem_probability(0.03));
  CHECK_FALSE(nested.count(TCA_NETEM_DELAY_DIST));

  // A plain delay carries no attributes netem would misread as settings.
  ShapeRule plain;
  plain.netem = NetemSettings{};
  plain.netem->delay_us = 100'000;
  const Decoded p = decode(tc_add_request_bytes(plan_rule(plain, 2), 7, TcRequest::kNetem));
  const Attr& popts = p.top.at(TCA_OPTIONS);
  CHECK(popts.len == sizeof(tc_netem_qopt));
  CHECK(ticks_to_ns(popts.as<tc_netem_qopt>().latency) == 100'000'000u);
  CHECK(popts.as<tc_netem_qopt>().loss == 0u);
  CHECK(popts.as<tc_netem_qopt>().limit == 100'000u);
}

TEST_CASE("tc requests: netem's normal distribution table rides along", "[tc-plan]") {
  ShapeRule r;
  r.netem = NetemSettings{};
  r.netem->delay_us = 10'000;
  r.netem->jitter_us = 1'000;
  r.netem->normal_distribution = true;
  std::vector<std::uint8_t> bytes;
  try {
    bytes = tc_add_request_bytes(plan_rule(r, 2), 1, TcRequest::kNetem);
  } catch (const std::runtime_error& e) {
    WARN("skipped: " << e.what());  // iproute2's normal.dist is not installed
    return;
  }
  const Decoded d = decode(std::move(bytes));
  const Attr& options = d.top.at(TCA_OPTIONS);
  CHECK(options.data + options.len == d.bytes.data() + d.bytes.size());
  auto nested = attrs(options.data + RTA_ALIGN(sizeof(tc_netem_qopt)), options.len - RTA_ALIGN(sizeof(tc_netem_qopt)));
  REQUIRE(nested.count(TCA_NETEM_DELAY_DIST));
  CHECK(nested.at(TCA_NETEM_DELAY_DIST).len == 4096 * sizeof(std::int16_t));  // iproute2's table size
}

TEST_CASE("tc requests: htb class and u32 filter as the kernel reads them", "[tc-plan]") {
  ShapeRule unlimited;
  unlimited.match_src = "10.1.2.3";
  const RulePlan plan = plan_rule(unlimited, 2);
  const Decoded c = decode(tc_add_request_bytes(plan, 3, TcRequest::kClass));
  CHECK(c.hdr.nlmsg_type == RTM_NEWTCLASS);
  CHECK(c.tc.tcm_parent == TC_H_MAKE(1u << 16, 0u));
  CHECK(c.tc.tcm_handle == TC_H_MAKE(1u << 16, 2u));
  CHECK(kind(c) == "htb");
  const Attr& options = c.top.at(TCA_OPTIONS);
  auto htb = attrs(options.data, options.len);
  const auto parms = htb.at(TCA_HTB_PARMS).as<tc_htb_opt>();
  CHECK(htb.at(TCA_HTB_RATE64).as<std::uint64_t>() == kUnlimitedBytesPerSecond);  // over 32 bits
  CHECK(htb.at(TCA_HTB_CEIL64).as<std::uint64_t>() == kUnlimitedBytesPerSecond);
  CHECK(parms.quantum == 200'000u);
  CHECK(ticks_to_ns(parms.buffer) == 1'000'000u);  // 12.5 MB at 12.5 GB/s: 1 ms
  CHECK(ticks_to_ns(parms.cbuffer) == 1'000'000u);

  const Decoded f = decode(tc_add_request_bytes(plan, 3, TcRequest::kFilter));
  CHECK(f.hdr.nlmsg_type == RTM_NEWTFILTER);
  CHECK(f.tc.tcm_parent == TC_H_MAKE(1u << 16, 0u));
  CHECK(TC_H_MAJ(f.tc.tcm_info) >> 16 == plan.prio);
  CHECK(TC_H_MIN(f.tc.tcm_info) == htons(0x0800));  // protocol ip
  CHECK(kind(f) == "u32");
  auto u32 = attrs(f.top.at(TCA_OPTIONS).data, f.top.at(TCA_OPTIONS).len);
  CHECK(u32.at(TCA_U32_CLASSID).as<std::uint32_t>() == TC_H_MAKE(1u << 16, 2u));
  const Attr& sel = u32.at(TCA_U32_SEL);
  REQUIRE(sel.len >= sizeof(tc_u32_sel) + sizeof(tc_u32_key));
  tc_u32_sel s;
  std::memcpy(&s, sel.data, sizeof s);
  CHECK((s.flags & TC_U32_TERMINAL) != 0);
  REQUIRE(s.nkeys == 1);
  tc_u32_key key;
  std::memcpy(&key, sel.data + sizeof(tc_u32_sel), sizeof key);
  CHECK(key.val == htonl(0x0A010203u));
  CHECK(key.mask == 0xFFFFFFFFu);
  CHECK(key.off == 12);

  const Decoded root = decode(tc_add_request_bytes(plan, 3, TcRequest::kRoot));
  CHECK(root.tc.tcm_parent == TC_H_ROOT);
  CHECK(root.tc.tcm_handle == TC_H_MAKE(1u << 16, 0u));
  CHECK_FALSE(root.hdr.nlmsg_flags & NLM_F_REPLACE);  // the ownership check (tc_shaper.cc)
  auto init = attrs(root.top.at(TCA_OPTIONS).data, root.top.at(TCA_OPTIONS).len);
  CHECK(init.at(TCA_HTB_INIT).as<tc_htb_glob>().defcls == 0u);  // no default class: direct queue
}

}  // namespace tc_requests_test
