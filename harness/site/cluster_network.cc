#include "harness/site/cluster_network.h"

#include <chrono>
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <spdlog/spdlog.h>

#include "faults/network/network_plane.h"
#include "faults/registry/registry.h"
#include "harness/core/host_error.h"

namespace chaosbench::harness {
namespace {

using Clock = std::chrono::steady_clock;
using TL = TimelineLog;

bool link_asked(const ClusterSpec& c) { return c.link.rate || c.link.delay; }

// A fault of registry type `type` with its declared defaults (egress, backend "auto", no
// jitter...) and `key` set to `value`: cluster.link's shaping is that fault, for the run.
std::unique_ptr<faults::Fault> make_link_fault(std::string_view type, const std::string& key, faults::ParamValue value) {
  const auto* info = faults::find_fault_type(type);
  if (!info) throw std::logic_error(fmt::format("cluster.link: no fault type {}", type));
  faults::Params params = faults::defaults_of(info->params);
  params.set(key, std::move(value));
  return info->make(params);
}

}  // namespace

ClusterNetwork::ClusterNetwork(const ClusterSpec& cluster, std::uint64_t seed, const std::string& run_id,
                               const std::string& runtime_dir, Journal& journal, TimelineLog& timeline, double now_s)
    : cluster_(cluster), seed_(seed), runtime_dir_(runtime_dir) {
  const auto mode = cluster.mode;
  if (mode == ClusterMode::kLocal) {
    why_local_ = "cluster.mode is local";
    if (link_asked(cluster)) throw HostError("cluster.link needs the cluster in network namespaces, and cluster.mode is local");
    return;
  }
  try {
    auto start = Clock::now();
    netns_ = std::make_unique<NetnsCluster>(cluster.nodes, run_id);
    const double ms = std::chrono::duration<double, std::milli>(Clock::now() - start).count();
    spdlog::info("cluster: {} network namespaces up in {:.1f} ms", cluster.nodes, ms);
    std::vector<std::string> addrs;
    for (int n = 0; n < cluster.nodes; ++n) addrs.push_back(netns_->address(n));
    timeline.write(0, "cluster_up", {{"mode", TL::str("network namespaces")}, {"bring_up_ms", TL::num(ms)},
                                     {"netns", netns_->namespace_ids()}, {"addresses", addrs}});
    name_nodes(timeline);
    std::vector<faults::NetworkNode> nodes;
    for (int n = 0; n < cluster.nodes; ++n)
      nodes.push_back({netns_->node_netns_fd(n), netns_->address(n), NetnsCluster::bridge_port(n)});
    plane_ = std::make_unique<faults::NetworkPlane>(netns_->bridge_netns_fd(), std::move(nodes),
                                                    NetnsCluster::kNodeInterface, seed_);
    shape_links(journal, timeline, now_s);
  } catch (const HostError& e) {
    if (mode == ClusterMode::kNamespaces || link_asked(cluster)) throw;
    why_local_ = e.what();
    spdlog::info("cluster: local processes on loopback ({})", why_local_);
  }
}

ClusterNetwork::~ClusterNetwork() { shut_down(); }

std::string ClusterNetwork::address(int node) const { return netns_ ? netns_->address(node) : "127.0.0.1"; }

// Hostnames that resolve to the nodes' addresses, for programs that find their peers by
// name (docs/scenario-format.md). Without them a run still works for everything that is
// told addresses (the built-in workloads, *_SOCKET_IFNAME), so a host that cannot make
// them gets a warning, not an error.
void ClusterNetwork::name_nodes(TimelineLog& timeline) {
  std::vector<std::string> addrs;
  for (int n = 0; n < cluster_.nodes; ++n) addrs.push_back(netns_->address(n));
  try {
    names_ = std::make_unique<NodeIdentity>(addrs, runtime_dir_);
    timeline.write(0, "nodes_named", {{"hostnames", TL::str(fmt::format("node0..node{}", addrs.size() - 1))}});
  } catch (const HostError& e) {
    spdlog::warn("cluster: the nodes keep the host's name ({}); programs that find peers by hostname may not", e.what());
    timeline.write(0, "nodes_not_named", {{"error", TL::str(e.what())}});
  }
}

// cluster.link: every node's link gets the rate (its egress, as a NIC) and the one-way
// delay (each packet once), for the whole run: network.rate and network.delay faults made
// through the registry, never reverted before the end.
void ClusterNetwork::shape_links(Journal& journal, TimelineLog& timeline, double now_s) {
  const auto& link = cluster_.link;
  faults::ResolvedTarget all;
  for (int n = 0; n < cluster_.nodes; ++n) all.nodes.push_back(n);
  all.network = plane_.get();
  try {
    if (link.rate) {
      shaping_.push_back(make_link_fault("network.rate", "rate", *link.rate));
      shaping_.back()->apply(all, journal);
    }
    if (link.delay) {
      shaping_.push_back(make_link_fault("network.delay", "delay", *link.delay));
      shaping_.back()->apply(all, journal);
    }
  } catch (const faults::FaultError& e) {
    for (auto it = shaping_.rbegin(); it != shaping_.rend(); ++it) {
      try {
        (*it)->revert();  // what did go in comes out: its journal entries close
      } catch (const std::exception&) {
      }
    }
    shaping_.clear();
    throw HostError(fmt::format("cluster.link cannot be set up on this host: {}", e.what()));
  }
  for (const auto& f : shaping_) timeline.write(now_s, "link_shaped", {{"backend", TL::str(f->backend())}});
}

std::vector<std::string> ClusterNetwork::shut_down() {
  std::vector<std::string> errors;
  for (auto it = shaping_.rbegin(); it != shaping_.rend(); ++it) {
    try {
      (*it)->revert();
    } catch (const std::exception& e) {
      errors.push_back(e.what());
    }
  }
  shaping_.clear();
  plane_.reset();
  netns_.reset();
  return errors;
}

}  // namespace chaosbench::harness
