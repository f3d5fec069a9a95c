// The nfqueue delay line in host mode: on a host without sch_netem, each job
// host holds what it receives from the job's other hosts, in a chain of ours jumped to
// from its mangle table's INPUT. Three namespaces play hosts (host_net_fixture.h: A and B
// the job, C outside it); the fault is applied on both job hosts' planes, as their agents
// would. ping and iperf3 check the effect from inside the hosts: the job peer sees it,
// C's traffic does not, and nothing of ours is left after revert. The [network] cases
// need root; they ask for "auto" where the kernel has no netem (the backend it then
// takes), "nfqueue" where it has.
#include <catch2/catch.hpp>

#include <algorithm>
#include <chrono>
#include <fmt/format.h>
#include <future>
#include <map>

#include "common/kernel/netns.h"
#include "faults/network/delay_line.h"
#include "faults/network/traffic_flows.h"
#include "harness/journal/entry_checks.h"
#include "harness/journal/netns_undo.h"
#include "host_net_fixture.h"
#include "test_util.h"

namespace host_delay_line_test {  // this file's names, apart in a unity batch (tests/CMakeLists.txt)

using namespace chaosbench;
using faults::Direction;
using faults::Flow;
using test::check_nothing_left;
using test::delay_20ms;
using test::Hosts;
using test::kA;
using test::kB;
using test::kC;
using test::make_fault;
using test::on_node;

namespace {

// The backend request that reaches the delay line on this host.
std::string delay_line_backend() { return faults::NetworkPlane::netem_available() ? "nfqueue" : "auto"; }

// The rule that holds what `receiver` gets from `sender` on `receiver`'s INPUT, as
// `iptables -t mangle -S` prints it (without the queue number).
std::string held_rule(const Hosts& h, int sender, int receiver) {
  return fmt::format("-s {}/32 -d {}/32 -i {} -j NFQUEUE", h.address(sender), h.address(receiver),
                     harness::NetnsCluster::kNodeInterface);
}

std::string mangle_rules(const Hosts& h, int node) { return h.run(node, {"iptables", "-t", "mangle", "-S"}); }

bool has(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

}  // namespace

TEST_CASE("host receive share: each host places the flows it receives, from job peers only", "[network-flows]") {
  faults::ResolvedTarget t;
  t.nodes = {0};
  const auto egress = faults::target_flows(t, Direction::kEgress);
  // Node 0's sending is held by each receiver; node 0 itself receives none of it.
  CHECK(faults::host_receive_share(egress, 0, 3).empty());
  CHECK(faults::host_receive_share(egress, 1, 3) == std::vector<Flow>{{0, 1}});
  CHECK(faults::host_receive_share(egress, 2, 3) == std::vector<Flow>{{0, 2}});
  // Its ingress (any node -> 0) is node 0's to hold, one rule per peer, never a match-all.
  const auto both = faults::target_flows(t, Direction::kBoth);
  CHECK(faults::host_receive_share(both, 0, 3) == std::vector<Flow>{{1, 0}, {2, 0}});
  CHECK(faults::host_receive_share(both, 1, 3) == std::vector<Flow>{{0, 1}});
  CHECK(faults::host_receive_share(faults::target_flows(t, Direction::kIngress), 1, 3).empty());
  faults::ResolvedTarget link;
  link.links = {{1, 2}};
  CHECK(faults::host_receive_share(faults::target_flows(link, Direction::kEgress), 2, 3) == std::vector<Flow>{{1, 2}});
  CHECK(faults::host_receive_share(faults::target_flows(link, Direction::kEgress), 1, 3).empty());
  // All hosts' shares together are the flows, each once: what the senders would place.
  for (const auto& flows : {egress, both}) {
    std::vector<Flow> sent, received;
    for (int local = 0; local < 3; ++local) {
      for (const auto& f : faults::host_share(flows, local, 3)) sent.push_back(f);
      for (const auto& f : faults::host_receive_share(flows, local, 3)) received.push_back(f);
    }
    std::sort(sent.begin(), sent.end());
    std::sort(received.begin(), received.end());
    CHECK(sent == received);
  }
}

// RTTs A->B and A->C before, during and after a fault: ping's own (ending at the
// kernel's receive timestamp) and user to user (ping -U).
struct Rtts {
  test::PingResult b, c, user_b, user_c;
};

Rtts measure(const Hosts& h) { return {h.ping(kA, kB), h.ping(kA, kC), h.ping(kA, kB, true), h.ping(kA, kC, true)}; }

std::string describe(const Rtts& before, const Rtts& during, const Rtts& after) {
  auto row = [&](const char* what, auto member) {
    return fmt::format("{} {:.3f} / {:.3f} / {:.3f} ms", what, (before.*member).avg_ms, (during.*member).avg_ms,
                       (after.*member).avg_ms);
  };
  return fmt::format("RTT (before / during / after): {}, {}; user to user: {}, {}", row("A->B", &Rtts::b),
                     row("A->C", &Rtts::c), row("A->B", &Rtts::user_b), row("A->C", &Rtts::user_c));
}

TEST_CASE("host mode: what run and validate check before starting accepts the delay line", "[network-flows]") {
  const auto* info = faults::find_fault_type("network.delay");
  REQUIRE(info != nullptr);
  REQUIRE(info->host_backend);
  faults::Params params = faults::defaults_of(info->params);
  params.set("delay", common::Duration{std::chrono::milliseconds(20)});
  std::string why;
  CHECK(info->host_backend(params, &why) == (faults::NetworkPlane::netem_available() ? "netem" : "nfqueue"));
  CHECK(why.empty());
}

TEST_CASE("host mode: network.delay 20ms on node A is held on the receiver's INPUT: A->B rises, A->C does not",
          "[network]") {
  if (test::skip_without_root("network namespaces and iptables need root")) return;
  Hosts h;
  auto plane_a = h.plane(kA), plane_b = h.plane(kB);
  const Rtts base = measure(h);
  REQUIRE(base.b.received == 5);
  REQUIRE(base.c.received == 5);
  for (const std::string direction : {"egress", "both"}) {
    // The same fault on the same target on each job host, as the agents apply it.
    auto job = test::apply_on_job(h, *plane_a, *plane_b, [&] { return delay_20ms(direction, delay_line_backend()); });
    const auto rules_a = mangle_rules(h, kA), rules_b = mangle_rules(h, kB);
    const auto filter_b = h.run(kB, {"iptables", "-S"});
    const Rtts during = measure(h);
    const auto held_by_b = job.on_b->effect();
    job.revert();
    const Rtts after = measure(h);
    INFO(direction << ": " << describe(base, during, after));
    INFO("A's mangle table:\n" << rules_a << "B's mangle table:\n" << rules_b);
    CHECK(job.on_a->backend() == "nfqueue");
    CHECK(job.on_b->backend() == "nfqueue");
    // B holds A's sending; A holds B's sending only when A's ingress is asked for too.
    CHECK(has(rules_b, held_rule(h, kA, kB)));
    CHECK(has(rules_b, "-A INPUT -j chaosbench"));
    CHECK(has(rules_a, held_rule(h, kB, kA)) == (direction == "both"));
    CHECK_FALSE(has(rules_a + rules_b, h.address(kC)));
    CHECK_FALSE(has(filter_b, "chaosbench"));  // the host's own filter table sees every packet
    CHECK(held_by_b.at("packets") >= 5);
    // Each direction once: +20 ms for egress, +40 ms for both, as on the bridge. ping's
    // own RTT misses what A holds itself (the replies' timestamp is taken before A's INPUT).
    const double expect = direction == "both" ? 40 : 20;
    CHECK(during.user_b.received == 5);
    CHECK(during.user_b.avg_ms - base.user_b.avg_ms == Approx(expect).margin(3));
    CHECK(during.b.avg_ms - base.b.avg_ms == Approx(20).margin(3));
    for (const auto* c : {&during.c, &during.user_c, &after.c, &after.user_c}) {
      CHECK(c->received == 5);
      CHECK(c->avg_ms < 5.0);  // C is not in the job: untouched
    }
    CHECK(after.b.avg_ms < base.b.avg_ms + 3);
    CHECK(after.user_b.avg_ms < base.user_b.avg_ms + 3);
    check_nothing_left(h);
  }
}

TEST_CASE("host mode: network.loss 100% on node A through the delay line cuts A's packets to B, not to C",
          "[network]") {
  if (test::skip_without_root("network namespaces and iptables need root")) return;
  Hosts h;
  auto plane_a = h.plane(kA), plane_b = h.plane(kB);
  const std::map<std::string, faults::ParamValue> all{{"percent", common::Percent{100}},
                                                     {"backend", delay_line_backend()}};
  auto job = test::apply_on_job(h, *plane_a, *plane_b, [&] { return make_fault("network.loss", all); });
  CHECK(mangle_rules(h, kA).find("chaosbench") == std::string::npos);  // egress: A receives none of it
  CHECK(h.ping(kA, kB).received == 0);
  CHECK(h.ping(kA, kC).received == 5);
  CHECK(h.ping(kB, kC).received == 5);
  job.revert();
  CHECK(h.ping(kA, kB).received == 5);
  check_nothing_left(h);
}

TEST_CASE("host mode: TCP from A to B keeps its throughput under a 20 ms delay line on B's INPUT", "[network]") {
  if (test::skip_without_root("network namespaces and iptables need root")) return;
  if (common::run_in_netns(-1, {"iperf3", "--version"}, std::chrono::seconds(5)).exit_code != 0) {
    WARN("skipped: iperf3 is not installed (scripts/bootstrap.sh installs it)");
    return;
  }
  Hosts h;
  auto plane_a = h.plane(kA), plane_b = h.plane(kB);
  std::string err;
  const double base = test::iperf3_mbit(h.fd(kA), h.fd(kB), h.address(kB), 2, &err);
  auto job = test::apply_on_job(h, *plane_a, *plane_b, [] { return delay_20ms("egress", delay_line_backend()); });
  const double delayed = test::iperf3_mbit(h.fd(kA), h.fd(kB), h.address(kB), 3, &err);
  const double to_c = test::iperf3_mbit(h.fd(kA), h.fd(kC), h.address(kC), 2, &err);
  job.revert();
  INFO(fmt::format("A->B {:.0f} Mbit/s before, {:.0f} Mbit/s under the delay; A->C {:.0f} Mbit/s; {}", base, delayed,
                   to_c, err));
  // Held on the sender's OUTPUT instead, the stream fell to ~2 Mbit/s (TCP small queues).
  CHECK(delayed > 200);
  CHECK(to_c > 1000);
  check_nothing_left(h);
}

TEST_CASE("host mode: cleanup undoes a dead agent's mangle INPUT chain, and a journaled table must be ours",
          "[network]") {
  if (test::skip_without_root("network namespaces and iptables need root")) return;
  Hosts h;
  auto plane = h.plane(kB);
  auto holder = h.keep_process_in(kB);
  auto delay = delay_20ms("egress", delay_line_backend());
  delay->apply(on_node(*plane, kA), h.log);
  const auto* chain = h.log.find("iptables_chain");
  REQUIRE(chain != nullptr);
  CHECK(chain->fields.at("table") == "mangle");
  CHECK(chain->fields.at("hook") == "INPUT");
  harness::JournalFile journal;
  CHECK(harness::check_entry(journal, *chain).empty());
  auto other_table = *chain;
  other_table.fields["table"] = "nat";
  CHECK(harness::check_entry(journal, other_table) == "not a chaosbench iptables chain");
  // As `chaosbench cleanup` would after the agent died: the entry, not the fault.
  CHECK_THAT(harness::undo_iptables_chain(*chain, true), Catch::Contains("the mangle INPUT jump"));
  CHECK_THAT(harness::undo_iptables_chain(*chain, false), Catch::Contains("removed iptables chain"));
  CHECK(h.leftovers(kB).empty());
  CHECK(h.ping(kA, kB).avg_ms < 5.0);
  CHECK_NOTHROW(delay->revert());  // what cleanup removed is gone for the fault too
  CHECK(h.log.open() == 0);
  holder.wait();
}

TEST_CASE("host mode: a queue number another process serves in the host's namespace is passed over", "[network]") {
  if (test::skip_without_root("network namespaces and iptables need root")) return;
  Hosts h;
  const double base = h.ping(kA, kB).avg_ms;
  auto plane = h.plane(kB);
  const std::uint16_t first = h.plane(kB)->next_queue();  // what a fresh plane hands out first
  const faults::DelayLine squatter(h.fd(kB), first, faults::DelayLineSettings{});
  auto delay = delay_20ms("egress", delay_line_backend());
  delay->apply(on_node(*plane, kA), h.log);
  const auto rules = mangle_rules(h, kB);
  const auto during = h.ping(kA, kB);
  delay->revert();
  INFO(rules);
  CHECK(has(rules, fmt::format("--queue-num {} ", first + 1)));
  CHECK(during.avg_ms - base == Approx(20).margin(3));
  check_nothing_left(h);
}

}  // namespace host_delay_line_test
