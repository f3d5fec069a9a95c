#include "host_net_fixture.h"

#include <catch2/catch.hpp>

#include <chrono>
#include <fmt/format.h>
#include <thread>
#include <unistd.h>

#include "common/kernel/netns.h"

namespace chaosbench::test {

std::uint64_t OpenEntries::record(const std::string& kind, std::map<std::string, std::string> fields) {
  ++last_;
  open_[last_] = harness::JournalEntry{last_, kind, std::move(fields)};
  return last_;
}

const harness::JournalEntry* OpenEntries::find(const std::string& kind) const {
  for (const auto& [id, e] : open_)
    if (e.kind == kind) return &e;
  return nullptr;
}

Hosts::Hosts() : cluster(3, fmt::format("hostnet-{}", ::getpid())) {}

std::unique_ptr<faults::NetworkPlane> Hosts::plane(int local) const {
  return faults::NetworkPlane::for_host(fd(local), harness::NetnsCluster::kNodeInterface, {address(kA), address(kB)},
                                        local, 7);
}

std::unique_ptr<faults::NetworkPlane> Hosts::bridge_plane() const {
  std::vector<faults::NetworkNode> nodes;
  for (int n = 0; n < 3; ++n) nodes.push_back({fd(n), address(n), harness::NetnsCluster::bridge_port(n)});
  return std::make_unique<faults::NetworkPlane>(cluster.bridge_netns_fd(), std::move(nodes),
                                                harness::NetnsCluster::kNodeInterface, 42);
}

std::future<common::CommandOutput> Hosts::keep_process_in(int node) const {
  auto holder = std::async(std::launch::async, [fd = fd(node)] {
    return common::run_in_netns(fd, {"sleep", "3"}, std::chrono::seconds(6));
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  return holder;
}

std::string Hosts::run(int node, std::vector<std::string> argv) const {
  return common::run_in_netns(fd(node), argv, std::chrono::seconds(5)).out;
}

std::string Hosts::leftovers(int node) const {
  std::string out;
  const auto qdiscs = run(node, {"tc", "qdisc", "show", "dev", harness::NetnsCluster::kNodeInterface});
  if (qdiscs.find(" 0: root") == std::string::npos || qdiscs.find("htb") != std::string::npos ||
      qdiscs.find("netem") != std::string::npos)
    out += qdiscs;
  for (const char* table : {"filter", "mangle"}) {
    const auto rules = run(node, {"iptables", "-t", table, "-S"});
    if (rules.find("chaosbench") != std::string::npos) out += rules;
  }
  return out;
}

void check_nothing_left(const Hosts& h) {
  CHECK(h.leftovers(kA).empty());
  CHECK(h.leftovers(kB).empty());
  CHECK(h.log.open() == 0);
}

faults::ResolvedTarget on_node(faults::NetworkPlane& plane, int node) {
  faults::ResolvedTarget t;
  t.nodes = {node};
  t.network = &plane;
  return t;
}

std::unique_ptr<faults::Fault> make_fault(std::string_view type,
                                          const std::map<std::string, faults::ParamValue>& values) {
  const auto* info = faults::find_fault_type(type);
  REQUIRE(info != nullptr);
  faults::Params params = faults::defaults_of(info->params);
  for (const auto& [key, value] : values) params.set(key, value);
  return info->make(params);
}

std::unique_ptr<faults::Fault> delay_20ms(const std::string& direction, const std::string& backend) {
  return make_fault("network.delay", {{"delay", common::Duration{std::chrono::milliseconds(20)}},
                                      {"direction", direction},
                                      {"backend", backend}});
}

JobFault apply_on_job(Hosts& h, faults::NetworkPlane& a, faults::NetworkPlane& b,
                      const std::function<std::unique_ptr<faults::Fault>()>& make) {
  JobFault f{make(), make()};
  f.on_a->apply(on_node(a, kA), h.log);
  f.on_b->apply(on_node(b, kA), h.log);
  return f;
}

}  // namespace chaosbench::test
