// The tc shaper on real namespaces: iperf3 measures that a rate rule holds TCP to its rate
// and that traffic no rule names is untouched; `tc` shows exactly the shaper's objects
// while applied and none after; someone else's root qdisc is refused and left alone.
// Needs root; the netem checks skip where the kernel has no sch_netem.
#include <catch2/catch.hpp>

#include <chrono>
#include <nlohmann/json.hpp>
#include <sstream>
#include <thread>

#include "common/kernel/netns.h"
#include "faults/network/tc_plan.h"
#include "faults/network/tc_shaper.h"
#include "harness/cluster/netns_cluster.h"
#include "net_probe.h"
#include "test_util.h"

namespace tc_shaper_test {  // this file's names, apart in a unity batch (tests/CMakeLists.txt)

using chaosbench::common::run_in_netns;
using chaosbench::faults::ShapeRule;
using chaosbench::faults::TcShaper;
using chaosbench::harness::NetnsCluster;
using chaosbench::test::skip_without_root;
using namespace std::chrono_literals;

namespace {

constexpr std::uint64_t k100Mbit = 100'000'000 / 8;  // bytes per second

std::string tc(int netns_fd, std::vector<std::string> args) {
  args.insert(args.begin(), "tc");
  auto r = chaosbench::common::run_in_netns(netns_fd, args, 5s);
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  return r.out;
}

int count_lines(const std::string& text, const std::string& containing = "") {
  std::istringstream in(text);
  int n = 0;
  for (std::string line; std::getline(in, line);)
    if (!line.empty() && line.find(containing) != std::string::npos) ++n;
  return n;
}

// TCP throughput from node `from` to node `to` in Mbit/s, as the receiver counted it.
double iperf_mbps(const NetnsCluster& c, int from, int to) {
  std::string error;
  const double mbit = chaosbench::test::iperf3_mbit(c.node_netns_fd(from), c.node_netns_fd(to), c.address(to), 2, &error);
  INFO(error);
  REQUIRE(mbit > 0);
  return mbit;
}

// The mean ping RTT from node `from` to node `to`, in milliseconds.
double ping_ms(const NetnsCluster& c, int from, int to) {
  auto r = chaosbench::test::ping(c.node_netns_fd(from), c.address(to), 5, 0.2);
  INFO(r.output);
  REQUIRE(r.received > 0);
  return r.avg_ms;
}

ShapeRule rate_to(const std::string& dst, std::uint64_t bytes_per_s = k100Mbit) {
  ShapeRule r;
  r.match_dst = dst;
  r.rate_bytes_per_s = bytes_per_s;
  return r;
}

void check_default_root(int netns_fd, const std::string& dev) {
  auto qdiscs = tc(netns_fd, {"qdisc", "show", "dev", dev});
  CHECK(count_lines(qdiscs) == 1);
  CHECK(count_lines(qdiscs, " 0: root") == 1);  // the kernel's own, handle 0
  CHECK(tc(netns_fd, {"class", "show", "dev", dev}).empty());
  CHECK(tc(netns_fd, {"filter", "show", "dev", dev}).empty());
}

}  // namespace

TEST_CASE("tc shaper: a 100 Mbit/s rule holds TCP to it, after remove the link is fast again", "[network]") {
  if (skip_without_root("tc and network namespaces need root")) return;
  NetnsCluster c(2, "tcstest-rate");
  TcShaper shaper(c.node_netns_fd(0), NetnsCluster::kNodeInterface);
  const int id = shaper.add(rate_to(c.address(1)));
  CHECK(shaper.root_handle() == "1:");
  const double shaped = iperf_mbps(c, 0, 1);
  CHECK(shaped == Approx(100).margin(10));
  shaper.remove(id);
  CHECK(shaper.root_handle().empty());
  CHECK(iperf_mbps(c, 0, 1) > 1000);
  check_default_root(c.node_netns_fd(0), "eth0");
}

TEST_CASE("tc shaper: traffic no rule matches takes htb's direct queue, unshaped", "[network]") {
  if (skip_without_root("tc and network namespaces need root")) return;
  NetnsCluster c(2, "tcstest-direct");
  TcShaper shaper(c.node_netns_fd(0), NetnsCluster::kNodeInterface);
  // Another address of the subnet that no node has: matched, never sent to.
  std::string other = c.address(1).substr(0, c.address(1).rfind('.')) + ".200";
  shaper.add(rate_to(other));
  CHECK(iperf_mbps(c, 0, 1) > 1000);
  CHECK(count_lines(tc(c.node_netns_fd(0), {"filter", "show", "dev", "eth0"}), "flowid 1:2") == 1);
}

TEST_CASE("tc shaper: on the bridge-side port a rule shapes traffic into the node", "[network]") {
  if (skip_without_root("tc and network namespaces need root")) return;
  NetnsCluster c(2, "tcstest-bridge");
  TcShaper shaper(c.bridge_netns_fd(), "n1");  // egress of n1 = ingress of node 1
  shaper.add(rate_to(c.address(1)));
  CHECK(iperf_mbps(c, 0, 1) == Approx(100).margin(10));
  check_default_root(c.node_netns_fd(1), "eth0");  // nothing inside the node itself
}

TEST_CASE("tc shaper: someone else's root qdisc is refused and left as it was", "[network]") {
  if (skip_without_root("tc and network namespaces need root")) return;
  NetnsCluster c(2, "tcstest-owner");
  const int ns = c.node_netns_fd(0);
  tc(ns, {"qdisc", "add", "dev", "eth0", "root", "tbf", "rate", "1gbit", "burst", "32kb", "latency", "10ms"});
  {
    TcShaper shaper(ns, NetnsCluster::kNodeInterface);
    CHECK_THROWS_WITH(shaper.add(rate_to(c.address(1))), Catch::Contains("tbf") && Catch::Contains("not the kernel's default"));
    CHECK(shaper.root_handle().empty());
    CHECK_NOTHROW(shaper.remove(12345));
    CHECK_NOTHROW(shaper.remove(2));
  }
  auto qdiscs = tc(ns, {"qdisc", "show", "dev", "eth0"});
  CHECK(count_lines(qdiscs, "qdisc tbf") == 1);
  CHECK(count_lines(tc(ns, {"class", "show", "dev", "eth0"}), "htb") == 0);  // tbf has a class of its own
  tc(ns, {"qdisc", "del", "dev", "eth0", "root"});

  // A second shaper on the same interface meets the first one's root the same way, and
  // its destructor leaves that root alone.
  TcShaper first(ns, NetnsCluster::kNodeInterface);
  first.add(rate_to(c.address(1)));
  {
    TcShaper second(ns, NetnsCluster::kNodeInterface);
    CHECK_THROWS_WITH(second.add(rate_to(c.address(1))), Catch::Contains("htb 1:"));
  }
  CHECK(count_lines(tc(ns, {"qdisc", "show", "dev", "eth0"}), "qdisc htb 1: root") == 1);
  CHECK_THROWS_WITH(TcShaper(ns, "eth9"), Catch::Contains("eth9"));
}

TEST_CASE("tc shaper: tc shows exactly the shaper's objects, and none after the last remove", "[network]") {
  if (skip_without_root("tc and network namespaces need root")) return;
  NetnsCluster c(2, "tcstest-show");
  const int ns = c.node_netns_fd(0);
  TcShaper shaper(ns, NetnsCluster::kNodeInterface);
  ShapeRule both = rate_to(c.address(1));
  both.match_src = c.address(0);
  ShapeRule all;  // unlimited, every IPv4 packet
  const int a = shaper.add(both);
  const int b = shaper.add(all);
  CHECK(a == 2);
  CHECK(b == 3);

  auto qdiscs = tc(ns, {"qdisc", "show", "dev", "eth0"});
  CHECK(count_lines(qdiscs) == 1);
  CHECK(count_lines(qdiscs, "qdisc htb 1: root") == 1);
  CHECK(count_lines(qdiscs, "default 0 ") == 1);  // no default class: the direct queue
  auto classes = tc(ns, {"class", "show", "dev", "eth0"});
  CHECK(count_lines(classes) == 2);
  CHECK(count_lines(classes, "class htb 1:2 root prio 0 rate 100Mbit ceil 100Mbit burst 12500b cburst 12500b") == 1);
  CHECK(count_lines(classes, "class htb 1:3 root prio 0 rate 100Gbit ceil 100Gbit") == 1);
  auto filters = tc(ns, {"filter", "show", "dev", "eth0"});
  INFO(filters);
  CHECK(count_lines(filters, "flowid") == 2);
  CHECK(count_lines(filters, "pref " + std::to_string(0x1002) + " u32") == 3);  // prio, hash table, node
  CHECK(count_lines(filters, "pref " + std::to_string(0x3003) + " u32") == 3);
  CHECK(count_lines(filters, "*flowid 1:2") == 1);  // '*': terminal
  CHECK(count_lines(filters, "*flowid 1:3") == 1);
  CHECK(count_lines(filters, "at 12") == 1);
  CHECK(count_lines(filters, "at 16") == 1);
  CHECK(count_lines(filters, "match 00000000/00000000 at 0") == 1);

  shaper.remove(a);
  CHECK_NOTHROW(shaper.remove(a));
  CHECK(shaper.root_handle() == "1:");
  classes = tc(ns, {"class", "show", "dev", "eth0"});
  CHECK(count_lines(classes) == 1);
  CHECK(count_lines(classes, "class htb 1:3 ") == 1);
  filters = tc(ns, {"filter", "show", "dev", "eth0"});
  CHECK(count_lines(filters, "flowid") == 1);
  CHECK(count_lines(filters, "*flowid 1:3") == 1);

  CHECK(shaper.add(both) == 2);  // the freed id comes back
  shaper.remove(b);
  shaper.remove(2);
  CHECK(shaper.root_handle().empty());
  check_default_root(ns, "eth0");

  // The destructor takes away what is left; one gone behind the shaper's back is fine.
  {
    TcShaper scoped(ns, NetnsCluster::kNodeInterface);
    scoped.add(all);
  }
  check_default_root(ns, "eth0");
  TcShaper robbed(ns, NetnsCluster::kNodeInterface);
  const int gone = robbed.add(all);
  tc(ns, {"qdisc", "del", "dev", "eth0", "root"});
  CHECK_NOTHROW(robbed.remove(gone));
  check_default_root(ns, "eth0");
}

TEST_CASE("tc shaper: netem is probed once, without sch_netem a netem rule fails cleanly", "[network]") {
  if (skip_without_root("tc and network namespaces need root")) return;
  std::string why;
  const bool available = TcShaper::netem_available(&why);
  std::string again;
  CHECK(TcShaper::netem_available(&again) == available);
  CHECK(again == why);
  if (available) {
    CHECK(why.empty());
    WARN("this kernel has sch_netem: the failure path is not exercised here");
    return;
  }
  CHECK_THAT(why, Catch::Contains("sch_netem"));
  NetnsCluster c(2, "tcstest-nonetem");
  const int ns = c.node_netns_fd(0);
  TcShaper shaper(ns, NetnsCluster::kNodeInterface);
  ShapeRule delayed;
  delayed.netem = chaosbench::faults::NetemSettings{};
  delayed.netem->delay_us = 20'000;
  CHECK_THROWS_WITH(shaper.add(delayed), Catch::Contains("the kernel has no sch_netem"));
  CHECK(shaper.root_handle().empty());  // the root made for it went with it
  check_default_root(ns, "eth0");
  shaper.add(rate_to(c.address(1)));
  CHECK_THROWS_WITH(shaper.add(delayed), Catch::Contains("sch_netem"));
  CHECK(count_lines(tc(ns, {"class", "show", "dev", "eth0"})) == 1);  // only the first rule
  CHECK(count_lines(tc(ns, {"filter", "show", "dev", "eth0"}), "flowid") == 1);
}

TEST_CASE("tc shaper: a 20 ms netem delay adds 20 ms to the ping RTT", "[network]") {
  if (skip_without_root("tc and network namespaces need root")) return;
  std::string why;
  if (!TcShaper::netem_available(&why)) {
    WARN("skipped: " << why);
    return;
  }
  NetnsCluster c(2, "tcstest-netem");
  const double base = ping_ms(c, 0, 1);
  TcShaper shaper(c.node_netns_fd(0), NetnsCluster::kNodeInterface);
  ShapeRule delayed;
  delayed.match_dst = c.address(1);
  delayed.netem = chaosbench::faults::NetemSettings{};
  delayed.netem->delay_us = 20'000;
  const int id = shaper.add(delayed);
  CHECK(ping_ms(c, 0, 1) == Approx(base + 20).margin(3));  // one way delayed: +20 ms
  shaper.remove(id);
  CHECK(ping_ms(c, 0, 1) < base + 3);
}

}  // namespace tc_shaper_test
