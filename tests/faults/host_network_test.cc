// Network faults in host mode (a job spans hosts, and each host's agent applies
// its own share of a fault): three namespaces on one bridge play hosts. A (node 0) and B
// (node 1) are the job; C is a host outside it on the same subnet, reached through the
// same interface of A. Faults are made through the registry, as the agent makes them, and
// checked from inside the hosts with ping and iperf3: the job peer sees the fault, C's
// traffic does not, and nothing of ours is left after revert. The [network] cases need
// root; those that need netem skip where the kernel has no sch_netem. The delay line's
// host mode (nfqueue on the receiver's INPUT) is in host_delay_line_test.cc.
#include <catch2/catch.hpp>

#include <chrono>
#include <fmt/format.h>
#include <future>
#include <memory>

#include "common/kernel/netns.h"
#include "faults/network/traffic_flows.h"
#include "faults/network/network_plane.h"
#include "faults/registry/registry.h"
#include "harness/cluster/netns_cluster.h"
#include "harness/journal/entry_checks.h"
#include "harness/journal/netns_undo.h"
#include "host_net_fixture.h"
#include "test_util.h"

namespace host_network_test {  // this file's names, apart in a unity batch (tests/CMakeLists.txt)

using namespace chaosbench;
using faults::Direction;
using faults::Flow;

namespace {

using test::kA;
using test::kB;
using test::kC;
using test::Hosts;
using test::on_node;
using test::make_fault;
using test::delay_20ms;
using test::check_nothing_left;

// True (after the "skipped:" warning ctest reads) when this host cannot run the case.
bool skip_without_netem() {
  if (test::skip_without_root("network namespaces and tc need root")) return true;
  std::string why;
  if (faults::NetworkPlane::netem_available(&why)) return false;
  WARN("skipped: " << why);
  return true;
}

}  // namespace

TEST_CASE("host share: each host places the flows it sends, toward job peers only", "[network-flows]") {
  faults::ResolvedTarget t;
  t.nodes = {0};
  const auto egress = faults::target_flows(t, Direction::kEgress);
  CHECK(faults::host_share(egress, 0, 3) == std::vector<Flow>{{0, 1}, {0, 2}});
  CHECK(faults::host_share(egress, 1, 3).empty());  // node 0 sends, node 1 has nothing to place
  // Ingress of node 0 is placed by every other host, as its own sending to node 0.
  const auto both = faults::target_flows(t, Direction::kBoth);
  CHECK(faults::host_share(both, 0, 3) == std::vector<Flow>{{0, 1}, {0, 2}});
  CHECK(faults::host_share(both, 1, 3) == std::vector<Flow>{{1, 0}});
  CHECK(faults::host_share(both, 2, 3) == std::vector<Flow>{{2, 0}});
  CHECK(faults::host_share(faults::target_flows(t, Direction::kIngress), 0, 3).empty());
  faults::ResolvedTarget link;
  link.links = {{1, 2}};
  CHECK(faults::host_share(faults::target_flows(link, Direction::kEgress), 1, 3) == std::vector<Flow>{{1, 2}});
  CHECK(faults::host_share(faults::target_flows(link, Direction::kEgress), 2, 3).empty());
  faults::ResolvedTarget groups;
  groups.groups = {{0}, {1, 2}};
  CHECK(faults::host_share(faults::partition_flows(groups, true), 0, 3) == std::vector<Flow>{{0, 1}, {0, 2}});
  CHECK(faults::host_share(faults::partition_flows(groups, true), 1, 3).empty());  // one way: not the way back
  CHECK(faults::host_share(faults::partition_flows(groups, false), 1, 3) == std::vector<Flow>{{1, 0}});
}

TEST_CASE("host plane: a bad interface, address or node index is refused, with the reason", "[network]") {
  if (test::skip_without_root("network namespaces need root")) return;
  Hosts h;
  const std::string eth = harness::NetnsCluster::kNodeInterface;
  using faults::NetworkPlane;
  CHECK_THROWS_WITH(NetworkPlane::for_host(h.fd(kA), "nosuch0", {h.address(kA), h.address(kB)}, 0, 7),
                    Catch::Contains("interface nosuch0 is not on this host"));
  // C's address is not A's: A's rules would never match its own traffic.
  CHECK_THROWS_WITH(NetworkPlane::for_host(h.fd(kA), eth, {h.address(kC), h.address(kB)}, 0, 7),
                    Catch::Contains("does not carry this host's job address"));
  CHECK_THROWS_WITH(NetworkPlane::for_host(h.fd(kA), eth, {h.address(kA), "node1"}, 0, 7),
                    Catch::Contains("\"node1\" is not an IPv4 address"));
  CHECK_THROWS_WITH(NetworkPlane::for_host(h.fd(kA), eth, {h.address(kA), h.address(kA)}, 0, 7),
                    Catch::Contains("two of the job's hosts"));
  CHECK_THROWS_WITH(NetworkPlane::for_host(h.fd(kA), eth, {h.address(kA)}, 1, 7), Catch::Contains("not one of"));
  auto plane = h.plane(kA);
  CHECK(plane->host_mode());
  CHECK(plane->local_node() == kA);
  CHECK(plane->nodes() == 2);
  CHECK(plane->bridge_netns_fd() == -1);
  CHECK(h.bridge_plane()->local_node() == -1);
}

TEST_CASE("host mode: network.delay 20ms on node A delays A's traffic to job host B, not to non-job host C",
          "[network]") {
  if (skip_without_netem()) return;
  Hosts h;
  auto plane = h.plane(kA);
  const auto base_b = h.ping(kA, kB), base_c = h.ping(kA, kC);
  REQUIRE(base_b.received == 5);
  REQUIRE(base_c.received == 5);
  for (const std::string direction : {"egress", "both"}) {
    auto delay = delay_20ms(direction);
    delay->apply(on_node(*plane, kA), h.log);
    CHECK(delay->backend() == "netem");
    const auto during_b = h.ping(kA, kB), during_c = h.ping(kA, kC);
    delay->revert();
    const auto after_b = h.ping(kA, kB), after_c = h.ping(kA, kC);
    INFO(fmt::format("{}: RTT A->B {:.3f} / {:.3f} / {:.3f} ms, A->C {:.3f} / {:.3f} / {:.3f} ms (before / during / "
                     "after)", direction, base_b.avg_ms, during_b.avg_ms, after_b.avg_ms, base_c.avg_ms,
                     during_c.avg_ms, after_c.avg_ms));
    CHECK(during_b.received == 5);
    CHECK(during_b.avg_ms - base_b.avg_ms == Approx(20).margin(3));  // A's sending to B, once
    CHECK(during_c.received == 5);
    CHECK(during_c.avg_ms < 5.0);  // C is not in the job: untouched
    CHECK(after_b.avg_ms < base_b.avg_ms + 3);
    CHECK(after_c.avg_ms < 5.0);
    CHECK(h.leftovers(kA).empty());
    CHECK(h.log.open() == 0);
  }
}

TEST_CASE("host mode: each job host places its share, and a node's delay both ways adds what the bridge adds",
          "[network]") {
  if (skip_without_netem()) return;
  Hosts h;
  auto plane_a = h.plane(kA), plane_b = h.plane(kB);
  auto bridge = h.bridge_plane();
  const double base = h.ping(kA, kB).avg_ms;
  REQUIRE(base >= 0);
  for (auto [direction, expect] : {std::pair{"egress", 20.0}, std::pair{"both", 40.0}}) {
    // The same fault on the same target, on each job host as its agent applies it.
    // B's share: its sending to A (none for egress).
    auto job = test::apply_on_job(h, *plane_a, *plane_b, [&] { return delay_20ms(direction); });
    const auto host_mode = h.ping(kA, kB);
    const bool b_placed = h.leftovers(kB).find("netem") != std::string::npos;
    job.revert();
    auto in_bridge = delay_20ms(direction);
    in_bridge->apply(on_node(*bridge, kA), h.log);
    const auto bridge_mode = h.ping(kA, kB);
    in_bridge->revert();
    INFO(fmt::format("{}: RTT A->B {:.3f} ms base, {:.3f} ms host mode, {:.3f} ms bridge mode", direction, base,
                     host_mode.avg_ms, bridge_mode.avg_ms));
    CHECK(b_placed == (std::string(direction) == "both"));
    CHECK(host_mode.avg_ms - base == Approx(expect).margin(3));
    CHECK(bridge_mode.avg_ms - base == Approx(expect).margin(3));
    CHECK(host_mode.avg_ms == Approx(bridge_mode.avg_ms).margin(3));
  }
  check_nothing_left(h);
}

TEST_CASE("host mode: network.partition of node A cuts A from job host B, not from C, and is gone after revert",
          "[network]") {
  if (test::skip_without_root("network namespaces and iptables need root")) return;
  Hosts h;
  auto plane_a = h.plane(kA), plane_b = h.plane(kB);
  // B's share: its sending to A.
  auto cut = test::apply_on_job(h, *plane_a, *plane_b, [] { return make_fault("network.partition", {}); });
  CHECK(cut.on_a->backend() == "iptables");
  const auto rules = h.run(kA, {"iptables", "-S"});
  INFO(rules);
  CHECK(rules.find(fmt::format("-s {}/32 -d {}/32 -j DROP", h.address(kA), h.address(kB))) != std::string::npos);
  CHECK(rules.find("-A OUTPUT -j chaosbench") != std::string::npos);
  CHECK(rules.find(h.address(kC)) == std::string::npos);
  CHECK(h.run(kB, {"iptables", "-S"}).find(fmt::format("-s {}/32 -d {}/32 -j DROP", h.address(kB), h.address(kA))) !=
        std::string::npos);
  CHECK(h.ping(kA, kB).received == 0);
  CHECK(h.ping(kB, kA).received == 0);
  CHECK(h.ping(kA, kC).received == 5);
  CHECK(h.ping(kB, kC).received == 5);
  cut.revert();
  CHECK(h.ping(kA, kB).received == 5);
  CHECK(h.ping(kA, kC).received == 5);
  check_nothing_left(h);
  // One way: A's sending only; B has no share, applies nothing and does not throw.
  auto one_way_b = make_fault("network.partition", {{"one_way", true}});
  CHECK_NOTHROW(one_way_b->apply(on_node(*plane_b, kA), h.log));
  CHECK(h.leftovers(kB).empty());
  CHECK(h.log.open() == 0);
  one_way_b->revert();
}

TEST_CASE("host mode: network.rate 100mbit on node A limits what A sends to job host B, not to C", "[network]") {
  if (test::skip_without_root("network namespaces and tc need root")) return;
  if (common::run_in_netns(-1, {"iperf3", "--version"}, std::chrono::seconds(5)).exit_code != 0) {
    WARN("skipped: iperf3 is not installed (scripts/bootstrap.sh installs it)");
    return;
  }
  Hosts h;
  auto plane_a = h.plane(kA), plane_b = h.plane(kB);
  const common::Rate mbit100{100'000'000};
  auto rate = make_fault("network.rate", {{"rate", mbit100}});
  rate->apply(on_node(*plane_a, kA), h.log);
  std::string err;
  const double to_b = test::iperf3_mbit(h.fd(kA), h.fd(kB), h.address(kB), 2, &err);
  const double to_c = test::iperf3_mbit(h.fd(kA), h.fd(kC), h.address(kC), 2, &err);
  rate->revert();
  // A's ingress is B's sending: B's plane places it, A's has nothing to place.
  auto ingress_a = make_fault("network.rate", {{"rate", mbit100}, {"direction", std::string("ingress")}});
  auto ingress_b = make_fault("network.rate", {{"rate", mbit100}, {"direction", std::string("ingress")}});
  CHECK_NOTHROW(ingress_a->apply(on_node(*plane_a, kA), h.log));
  CHECK(h.leftovers(kA).empty());
  ingress_b->apply(on_node(*plane_b, kA), h.log);
  const double b_to_a = test::iperf3_mbit(h.fd(kB), h.fd(kA), h.address(kA), 2, &err);
  ingress_b->revert();
  ingress_a->revert();
  INFO(fmt::format("A->B {:.0f} Mbit/s, A->C {:.0f} Mbit/s under A's egress limit; B->A {:.0f} Mbit/s under A's "
                   "ingress limit; {}", to_b, to_c, b_to_a, err));
  CHECK(to_b == Approx(100).epsilon(0.10));
  CHECK(to_c > 1000);
  CHECK(b_to_a == Approx(100).epsilon(0.10));
  check_nothing_left(h);
}

TEST_CASE("host mode: an impairment no backend of the host can do is refused before anything changes",
          "[network]") {
  if (test::skip_without_root("network namespaces need root")) return;
  Hosts h;
  auto plane = h.plane(kB);  // B has a share of A's egress either way (A's sending, B's receiving)
  // The delay line cannot duplicate: "nfqueue" never can, "auto" only where netem is.
  auto dup = make_fault("network.duplicate", {{"percent", common::Percent{10}}, {"backend", std::string("nfqueue")}});
  CHECK_THROWS_WITH(dup->apply(on_node(*plane, kA), h.log), Catch::Contains("network.duplicate needs netem"));
  CHECK_FALSE(dup->applied());
  if (!faults::NetworkPlane::netem_available()) {
    auto netem = delay_20ms("egress", "netem");
    CHECK_THROWS_WITH(netem->apply(on_node(*plane, kA), h.log), Catch::Contains("backend netem asked for"));
    CHECK_FALSE(netem->applied());
    auto dup_auto = make_fault("network.duplicate", {{"percent", common::Percent{10}}});
    CHECK_THROWS_WITH(dup_auto->apply(on_node(*plane, kA), h.log), Catch::Contains("network.duplicate needs netem"));
    CHECK_FALSE(dup_auto->applied());
  }
  CHECK(h.log.open() == 0);
  CHECK(h.leftovers(kB).empty());
}

TEST_CASE("host mode: cleanup undoes a dead run's OUTPUT chain and root qdisc in the host's namespace",
          "[network]") {
  if (test::skip_without_root("network namespaces, tc and iptables need root")) return;
  Hosts h;
  auto plane = h.plane(kA);
  auto holder = h.keep_process_in(kA);
  auto cut = make_fault("network.partition", {});
  auto rate = make_fault("network.rate", {{"rate", common::Rate{100'000'000}}});
  cut->apply(on_node(*plane, kA), h.log);
  rate->apply(on_node(*plane, kA), h.log);
  const auto* chain = h.log.find("iptables_chain");
  const auto* root = h.log.find("tc_root");
  REQUIRE(chain != nullptr);
  REQUIRE(root != nullptr);
  harness::JournalFile journal;
  CHECK(harness::check_entry(journal, *chain).empty());
  CHECK(harness::check_entry(journal, *root).empty());
  // As `chaosbench cleanup` would after the agent died: the entries, not the faults.
  CHECK_THAT(harness::undo_iptables_chain(*chain, true), Catch::Contains("OUTPUT jump"));
  CHECK_THAT(harness::undo_iptables_chain(*chain, false), Catch::Contains("removed iptables chain"));
  CHECK_THAT(harness::undo_tc_root(*root, false), Catch::Contains("deleted qdisc"));
  CHECK(h.leftovers(kA).empty());
  CHECK(h.ping(kA, kB).received == 5);
  // What cleanup removed is gone for the faults too: their revert is idempotent.
  CHECK_NOTHROW(cut->revert());
  CHECK_NOTHROW(rate->revert());
  CHECK(h.log.open() == 0);
  holder.wait();
}

TEST_CASE("host mode: a chain of ours that a dead run left in the host's table is neither taken over nor removed",
          "[network]") {
  if (test::skip_without_root("network namespaces and iptables need root")) return;
  Hosts h;
  auto plane = h.plane(kA);
  // What a crashed agent left for cleanup: the name this plane would take first.
  const std::string left = fmt::format("*filter\n-N chaosbench0\n-A chaosbench0 -d {} -j DROP\n-I OUTPUT 1 -j chaosbench0\n"
                                       "COMMIT\n", h.address(kC));
  REQUIRE(faults::iptables_restore(h.fd(kA), left).empty());
  auto cut = make_fault("network.partition", {});
  cut->apply(on_node(*plane, kA), h.log);
  const auto rules = h.run(kA, {"iptables", "-S"});
  INFO(rules);
  CHECK(rules.find(fmt::format("-A chaosbench0 -d {}/32 -j DROP", h.address(kC))) != std::string::npos);
  CHECK(rules.find(fmt::format("-A chaosbench1 -s {}/32 -d {}/32 -j DROP", h.address(kA), h.address(kB))) !=
        std::string::npos);
  cut->revert();
  CHECK(faults::iptables_chain_exists(h.fd(kA), "chaosbench0"));
  CHECK_FALSE(faults::iptables_chain_exists(h.fd(kA), "chaosbench1"));
  CHECK(h.log.open() == 0);
}

}  // namespace host_network_test
