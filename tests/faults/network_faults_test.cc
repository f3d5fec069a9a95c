// Network faults on real namespaces, checked by outside tools (ping, iperf3): delay,
// loss, rate, partition, each reverted to the baseline; which flows each target means.
// The [network] cases need root; they run serially (see CMakeLists.txt) because they
// measure latency and throughput on a 2-core machine.
#include <catch2/catch.hpp>

#include <cmath>
#include <future>
#include <thread>
#include <fmt/format.h>
#include <map>
#include <memory>

#include "faults/network/impairment_fault.h"
#include "common/kernel/netns.h"
#include "faults/network/network_plane.h"
#include "faults/network/partition_fault.h"
#include "faults/network/rate_fault.h"
#include "faults/network/traffic_flows.h"
#include "harness/cluster/netns_cluster.h"
#include "harness/journal/netns_undo.h"
#include "net_probe.h"
#include "test_util.h"

namespace network_faults_test {  // this file's names, apart in a unity batch (tests/CMakeLists.txt)

using namespace chaosbench;
using faults::Direction;
using faults::Flow;
using faults::kAnyNode;

namespace {

// Counts what faults record and close, so a test can check nothing stays open.
class CountingLog final : public faults::UndoLog {
 public:
  std::uint64_t record(const std::string& kind, std::map<std::string, std::string>) override {
    open_[++n_] = kind;
    return n_;
  }
  void done(std::uint64_t id) override { open_.erase(id); }
  std::size_t open() const { return open_.size(); }

 private:
  std::uint64_t n_ = 0;
  std::map<std::uint64_t, std::string> open_;
};

// A namespaced cluster with the plane network faults act on.
struct Net {
  harness::NetnsCluster cluster;
  std::unique_ptr<faults::NetworkPlane> plane;
  CountingLog log;
  explicit Net(int nodes) : cluster(nodes, fmt::format("nettest-{}-{}", ::getpid(), nodes)) {
    std::vector<faults::NetworkNode> v;
    for (int n = 0; n < nodes; ++n)
      v.push_back({cluster.node_netns_fd(n), cluster.address(n), harness::NetnsCluster::bridge_port(n)});
    plane = std::make_unique<faults::NetworkPlane>(cluster.bridge_netns_fd(), std::move(v),
                                                   harness::NetnsCluster::kNodeInterface, 42);
  }
  faults::ResolvedTarget nodes(std::vector<int> n) const {
    faults::ResolvedTarget t;
    t.nodes = std::move(n);
    t.network = plane.get();
    return t;
  }
  faults::ResolvedTarget link(int a, int b) const {
    faults::ResolvedTarget t;
    t.links = {{a, b}};
    t.nodes = {a, b};
    t.network = plane.get();
    return t;
  }
  test::PingResult ping(int from, int to, int count = 20, double interval = 0.02) const {
    return test::ping(cluster.node_netns_fd(from), cluster.address(to), count, interval);
  }
  std::string bridge_iptables() const {
    return common::run_in_netns(cluster.bridge_netns_fd(), {"iptables", "-S"}, std::chrono::seconds(5)).out;
  }
  // Everything of ours around a node: iptables chains and bridge-nf-call-iptables in the
  // bridge namespace, htb or netem qdiscs on its interface and on its bridge port.
  std::string leftovers(int node) const {
    std::string out;
    if (bridge_iptables().find("chaosbench") != std::string::npos) out += bridge_iptables();
    auto nf = common::run_in_netns(cluster.bridge_netns_fd(), {"cat", "/proc/sys/net/bridge/bridge-nf-call-iptables"},
                                   std::chrono::seconds(5));
    if (nf.out != "0\n") out += "bridge-nf-call-iptables " + nf.out;  // off but in fault windows
    for (auto [fd, dev] : {std::pair{cluster.node_netns_fd(node), std::string("eth0")},
                           std::pair{cluster.bridge_netns_fd(), harness::NetnsCluster::bridge_port(node)}}) {
      auto tc = common::run_in_netns(fd, {"tc", "qdisc", "show", "dev", dev}, std::chrono::seconds(5));
      if (tc.out.find("htb") != std::string::npos || tc.out.find("netem") != std::string::npos) out += tc.out;
    }
    return out;
  }
};

faults::Impairment delay_of(double ms) {
  faults::Impairment imp;
  imp.delay = std::chrono::microseconds(static_cast<long>(ms * 1000));
  return imp;
}

}  // namespace

TEST_CASE("node targets become sender/receiver flows in each direction", "[network-flows]") {
  faults::ResolvedTarget t;
  t.nodes = {1};
  CHECK(faults::target_flows(t, Direction::kEgress) == std::vector<Flow>{{1, kAnyNode}});
  CHECK(faults::target_flows(t, Direction::kIngress) == std::vector<Flow>{{kAnyNode, 1}});
  CHECK(faults::target_flows(t, Direction::kBoth).size() == 2);
  // On the receiving side, node 1's egress is a rule in every other node.
  CHECK(faults::by_receiver(faults::target_flows(t, Direction::kEgress), 3) == std::vector<Flow>{{1, 0}, {1, 2}});
  // Its ingress is one rule in node 1 that matches any sender, and it absorbs the rest.
  CHECK(faults::by_receiver(faults::target_flows(t, Direction::kBoth), 3) ==
        std::vector<Flow>{{kAnyNode, 1}, {1, 0}, {1, 2}});
}

TEST_CASE("links are directed: egress is a to b, ingress b to a", "[network-flows]") {
  faults::ResolvedTarget t;
  t.links = {{0, 2}};
  CHECK(faults::target_flows(t, Direction::kEgress) == std::vector<Flow>{{0, 2}});
  CHECK(faults::target_flows(t, Direction::kIngress) == std::vector<Flow>{{2, 0}});
  CHECK(faults::by_receiver(faults::target_flows(t, Direction::kBoth), 4) == std::vector<Flow>{{0, 2}, {2, 0}});
}

TEST_CASE("partitions cut every pair across groups, or only the first side's sending", "[network-flows]") {
  faults::ResolvedTarget t;
  t.groups = {{0}, {1, 2}};
  CHECK(faults::partition_flows(t, false) == std::vector<Flow>{{0, 1}, {0, 2}, {1, 0}, {2, 0}});
  CHECK(faults::partition_flows(t, true) == std::vector<Flow>{{0, 1}, {0, 2}});
  faults::ResolvedTarget iso;
  iso.nodes = {2};
  CHECK(faults::by_receiver(faults::partition_flows(iso, false), 3) == std::vector<Flow>{{kAnyNode, 2}, {2, 0}, {2, 1}});
  CHECK(faults::parse_direction("both") == Direction::kBoth);
  CHECK_FALSE(faults::parse_direction("sideways"));
}

TEST_CASE("network.partition: ping fails across groups, works within, and every pair after revert", "[network]") {
  if (test::skip_without_root("network namespaces and iptables need root")) return;
  Net net(3);
  auto target = net.nodes({});
  target.groups = {{0}, {1, 2}};
  faults::PartitionFault cut(false);
  cut.apply(target, net.log);
  CHECK(cut.backend() == "iptables");
  CHECK(net.ping(0, 1, 3, 0.05).received == 0);
  CHECK(net.ping(2, 0, 3, 0.05).received == 0);
  CHECK(net.ping(1, 2, 3, 0.05).received == 3);
  cut.revert();
  for (int a = 0; a < 3; ++a)
    for (int b = 0; b < 3; ++b)
      if (a != b) CHECK(net.ping(a, b, 2, 0.05).received == 2);
  for (int n = 0; n < 3; ++n) CHECK(net.leftovers(n).empty());
  CHECK(net.log.open() == 0);
  cut.revert();  // idempotent
}

TEST_CASE("network.partition one_way: the first side cannot send, the way back still works", "[network]") {
  if (test::skip_without_root("network namespaces and iptables need root")) return;
  Net net(2);
  faults::PartitionFault cut(true);
  cut.apply(net.link(0, 1), net.log);
  // An echo needs both ways, so both pings fail: 0's requests are cut, and so are 0's
  // replies to 1. The rule itself shows that only 0 -> 1 is dropped.
  CHECK(net.ping(0, 1, 3, 0.05).received == 0);
  CHECK(net.ping(1, 0, 3, 0.05).received == 0);
  const auto rules = net.bridge_iptables();
  INFO(rules);
  CHECK(rules.find(fmt::format("-s {}/32 -d {}/32 -j DROP", net.cluster.address(0), net.cluster.address(1))) !=
        std::string::npos);
  CHECK(rules.find(fmt::format("-s {}/32 -d {}/32 -j DROP", net.cluster.address(1), net.cluster.address(0))) ==
        std::string::npos);
  cut.revert();
  CHECK(net.ping(0, 1, 2, 0.05).received == 2);
}

TEST_CASE("network.delay 20ms on a link raises ping RTT by 20 ms one way, 40 ms both ways", "[network]") {
  if (test::skip_without_root("network namespaces and iptables need root")) return;
  Net net(2);
  const auto base = net.ping(0, 1);
  REQUIRE(base.avg_ms >= 0);
  for (auto [dir, expect] : {std::pair{Direction::kEgress, 20.0}, std::pair{Direction::kBoth, 40.0}}) {
    faults::ImpairmentFault delay(delay_of(20), dir, "nfqueue");
    delay.apply(net.link(0, 1), net.log);
    const auto during = net.ping(0, 1);
    delay.revert();
    INFO(during.output);
    CHECK(during.received == 20);
    CHECK(during.avg_ms - base.avg_ms == Approx(expect).epsilon(0.10));
  }
  const auto after = net.ping(0, 1);
  CHECK(after.avg_ms < base.avg_ms + 1.0);
  CHECK(net.leftovers(0).empty());
  CHECK(net.leftovers(1).empty());
  CHECK(net.log.open() == 0);
}

TEST_CASE("network.delay on a node's egress delays what it sends to every node, once", "[network]") {
  if (test::skip_without_root("network namespaces and iptables need root")) return;
  Net net(3);
  const double base = net.ping(1, 0).avg_ms;
  faults::ImpairmentFault delay(delay_of(10), Direction::kEgress, "auto");
  delay.apply(net.nodes({1}), net.log);
  CHECK(delay.backend() == (faults::NetworkPlane::netem_available() ? "netem" : "nfqueue"));
  CHECK(net.ping(1, 0).avg_ms - base == Approx(10).epsilon(0.15));
  CHECK(net.ping(1, 2).avg_ms - base == Approx(10).epsilon(0.15));
  CHECK(net.ping(0, 2).avg_ms < base + 1.0);  // traffic not from node 1 is untouched
  delay.revert();
}

TEST_CASE("network.loss 10%: ping -c 400 loses a share inside the binomial 99% interval", "[network]") {
  if (test::skip_without_root("network namespaces and iptables need root")) return;
  Net net(2);
  faults::Impairment imp;
  imp.loss = 0.10;
  faults::ImpairmentFault loss(imp, Direction::kEgress, "auto");
  loss.apply(net.link(0, 1), net.log);
  const auto r = net.ping(0, 1, 400, 0.005);
  loss.revert();
  // Binomial(400, 0.1): mean 40, sd 6; the 99% interval is 40 +/- 2.576 sd = [25, 55].
  const int lost = r.sent - r.received;
  INFO(r.output);
  CHECK(r.sent == 400);
  CHECK(lost >= 25);
  CHECK(lost <= 55);
  CHECK(net.ping(0, 1, 20, 0.005).received == 20);
}

TEST_CASE("network.rate 100mbit: iperf3 measures 100 Mbit/s +/- 10%, and full speed after revert", "[network]") {
  if (test::skip_without_root("network namespaces and tc need root")) return;
  Net net(2);
  faults::RateFault rate(100'000'000, 0, Direction::kEgress);
  rate.apply(net.link(0, 1), net.log);
  std::string err;
  const double mbit = test::iperf3_mbit(net.cluster.node_netns_fd(0), net.cluster.node_netns_fd(1), net.cluster.address(1), 2, &err);
  rate.revert();
  INFO(err);
  CHECK(mbit == Approx(100).epsilon(0.10));
  const double after = test::iperf3_mbit(net.cluster.node_netns_fd(0), net.cluster.node_netns_fd(1), net.cluster.address(1), 1, &err);
  CHECK(after > 1000);
  CHECK(net.leftovers(0).empty());
  CHECK(net.log.open() == 0);
}

TEST_CASE("a backend that cannot do the fault is refused before anything changes", "[network]") {
  if (test::skip_without_root("network namespaces need root")) return;
  Net net(2);
  faults::Impairment dup;
  dup.duplicate = 0.01;
  std::string why;
  CHECK(faults::ImpairmentFault::choose_backend(dup, "nfqueue", &why).empty());
  CHECK(why.find("cannot duplicate") != std::string::npos);
  faults::ImpairmentFault f(dup, Direction::kEgress, "nfqueue");
  CHECK_THROWS_AS(f.apply(net.link(0, 1), net.log), faults::FaultError);
  CHECK_FALSE(f.applied());
  CHECK(net.log.open() == 0);
  CHECK(net.leftovers(1).empty());
}

TEST_CASE("cleanup of a network entry acts only in the journaled namespace, found by inode and cookie", "[network]") {
  if (test::skip_without_root("network namespaces need root")) return;
  Net net(1);
  const int fd = net.cluster.node_netns_fd(0);
  // A process in the namespace, as a rank would be: cleanup finds namespaces through them.
  auto holder = std::async(std::launch::async, [&] { return common::run_in_netns(fd, {"sleep", "2"}, std::chrono::seconds(5)); });
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  harness::JournalEntry e;
  e.kind = "tc_root";
  e.fields = {{"netns", faults::NetworkPlane::netns_id(fd)}, {"interface", "nosuchdev"}, {"handle", "1:"},
              {"netns_cookie", std::to_string(common::netns_cookie(fd) + 1)}};
  // Same inode, another cookie: a namespace that merely reuses the number; not touched.
  CHECK_THAT(harness::undo_tc_root(e, false), Catch::Contains("namespace is gone"));
  // Ours, but the interface went with its veth peer's namespace: nothing left to undo.
  e.fields["netns_cookie"] = std::to_string(common::netns_cookie(fd));
  CHECK_THAT(harness::undo_tc_root(e, false), Catch::Contains("interface is gone"));
  e.fields.erase("netns_cookie");  // no cookie to be sure by: left alone
  CHECK_THAT(harness::undo_tc_root(e, false), Catch::Contains("namespace is gone"));
  holder.wait();
}

}  // namespace network_faults_test
