// The scenario's cluster: nodes, ranks, mode, link, and for the multi-host modes the
// hosts (inline, or an inventory file beside the scenario), ssh and agent settings.
#include <arpa/inet.h>
#include <filesystem>
#include <fmt/format.h>
#include <set>

#include "harness/scenario/scenario_loader.h"
#include "harness/scenario/scenario_parts.h"

namespace chaosbench::harness {
namespace {

// The largest cluster of agents (hosts); local processes stop at 64 nodes.
constexpr int kMaxAgentNodes = 256;

bool is_ipv4(const std::string& s) {
  in_addr a{};
  return ::inet_pton(AF_INET, s.c_str(), &a) == 1;
}

// The interfaces faults may act on: names as the kernel takes them (1 to 15 bytes).
std::vector<std::string> read_interfaces(ParseContext& ctx, const json& list, const std::string& path) {
  std::vector<std::string> out;
  if (!list.is_array()) {
    ctx.error(path, fmt::format("expected an array of interface names, got {}", describe(list)));
    return out;
  }
  for (std::size_t k = 0; k < list.size(); ++k) {
    const auto& v = list[k];
    if (!v.is_string() || v.get<std::string>().empty() || v.get<std::string>().size() > 15)
      ctx.error(join_path(path, k), fmt::format("expected an interface name, got {}", describe(v)));
    else out.push_back(v.get<std::string>());
  }
  return out;
}

std::vector<HostSpec> read_hosts(ParseContext& ctx, const json& list, const std::string& path) {
  std::vector<HostSpec> hosts;
  if (!list.is_array() || list.empty()) {
    ctx.error(path, fmt::format("expected a non-empty array of hosts, got {}", describe(list)));
    return hosts;
  }
  std::set<std::string> names, addresses;
  for (std::size_t i = 0; i < list.size(); ++i) {
    const std::string at = join_path(path, i);
    ObjectReader h(ctx, list[i], at, {"name", "address", "user", "port", "interfaces"});
    HostSpec host;
    host.name = h.string("name").value_or(fmt::format("node{}", i));
    h.require("address", "the host's IPv4 address");
    if (auto a = h.string("address")) {
      if (!is_ipv4(*a)) ctx.error(h.path_of("address"), fmt::format("expected an IPv4 address, got \"{}\"", *a));
      else if (!addresses.insert(*a).second) ctx.error(h.path_of("address"), fmt::format("{} is listed twice", *a));
      host.address = *a;
    }
    if (!names.insert(host.name).second) ctx.error(h.path_of("name"), fmt::format("the name {} is listed twice", host.name));
    if (auto u = h.string("user")) host.user = *u;
    if (auto p = h.integer("port", 1, 65535)) host.port = static_cast<int>(*p);
    if (const json* ifs = h.raw("interfaces")) host.interfaces = read_interfaces(ctx, *ifs, h.path_of("interfaces"));
    hosts.push_back(std::move(host));
  }
  return hosts;
}

// An inventory's text: an array of hosts, or an object whose "hosts" is one. Its errors
// name the inventory's own file, line and column (ScenarioError).
std::vector<HostSpec> parse_inventory(const std::string& file, const std::string& text) {
  json doc = parse_document(text, file);  // a syntax error names its line and column
  ParseContext inv(file, text, {});
  const json* list = doc.is_object() && doc.contains("hosts") ? &doc["hosts"] : &doc;
  auto hosts = inv.failed() ? std::vector<HostSpec>{} : read_hosts(inv, *list, doc.is_object() ? "hosts" : "");
  if (inv.failed()) throw ScenarioError(inv.take());
  return hosts;
}

// cluster.hosts as a path, relative to the scenario file.
std::vector<HostSpec> read_inventory(ParseContext& ctx, const std::string& file, const std::string& scenario_file) {
  std::filesystem::path p(file);
  if (p.is_relative()) p = std::filesystem::path(scenario_file).parent_path() / p;
  std::string text;
  try {
    text = read_scenario_file(p.string());
  } catch (const ScenarioError& e) {
    ctx.error("cluster.hosts", fmt::format("the inventory {}: {}", p.string(), e.diagnostics().front().message));
    return {};
  }
  return parse_inventory(p.string(), text);
}

void parse_remote(ParseContext& ctx, ObjectReader& r, ClusterSpec& c) {
  if (const json* ssh = r.raw("ssh")) {
    ObjectReader s(ctx, *ssh, "cluster.ssh", {"config", "identity", "options"});
    if (auto v = s.string("config")) c.remote.ssh_config = *v;
    if (auto v = s.string("identity")) c.remote.ssh_identity = *v;
    if (const json* o = s.raw("options")) {
      if (!o->is_array()) ctx.error("cluster.ssh.options", fmt::format("expected an array of \"Key=value\" strings, got {}", describe(*o)));
      else
        for (std::size_t k = 0; k < o->size(); ++k) {
          const auto& v = (*o)[k];
          if (!v.is_string() || v.get<std::string>().find('=') == std::string::npos)
            ctx.error(join_path("cluster.ssh.options", k), fmt::format("expected \"Key=value\", got {}", describe(v)));
          else c.remote.ssh_options.push_back(v.get<std::string>());
        }
    }
  }
  if (const json* agent = r.raw("agent")) {
    ObjectReader a(ctx, *agent, "cluster.agent", {"command", "timeout", "port"});
    if (auto v = a.integer("port", 1, 65534)) c.remote.agent_port = static_cast<int>(*v);
    if (auto v = a.string("command")) {
      if (v->empty()) ctx.error("cluster.agent.command", "expected the chaosbench binary on the hosts, got \"\"");
      c.remote.agent_command = *v;
    }
    if (auto v = a.duration("timeout", /*allow_zero=*/false)) {
      if (v->value < std::chrono::seconds(1) || v->value > std::chrono::hours(1))
        ctx.error("cluster.agent.timeout", "expected from 1s to 1h");
      else c.remote.agent_timeout = *v;
    }
  }
}

void parse_slurm(ParseContext& ctx, ObjectReader& r, ClusterSpec& c) {
  const json* slurm = r.raw("slurm");
  if (!slurm) return;
  ObjectReader s(ctx, *slurm, "cluster.slurm", {"partition", "time_limit", "options", "interfaces"});
  if (const json* ifs = s.raw("interfaces")) c.remote.slurm_interfaces = read_interfaces(ctx, *ifs, "cluster.slurm.interfaces");
  if (auto v = s.string("partition")) c.remote.slurm_partition = *v;
  if (auto v = s.duration("time_limit", /*allow_zero=*/false)) c.remote.slurm_time_limit = *v;
  if (const json* o = s.raw("options")) {
    if (!o->is_array()) ctx.error("cluster.slurm.options", fmt::format("expected an array of srun options, got {}", describe(*o)));
    else
      for (std::size_t k = 0; k < o->size(); ++k) {
        const auto& v = (*o)[k];
        if (!v.is_string() || !v.get<std::string>().starts_with("--"))
          ctx.error(join_path("cluster.slurm.options", k), fmt::format("expected an srun option such as \"--exclusive\", got {}", describe(v)));
        else c.remote.slurm_options.push_back(v.get<std::string>());
      }
  }
}

void parse_hosts(ParseContext& ctx, ObjectReader& r, ClusterSpec& c, const std::string& scenario_file, bool nodes_given) {
  const json* hosts = r.raw("hosts");
  if (c.mode != ClusterMode::kSsh) {
    if (hosts) ctx.error("cluster.hosts", "hosts are for cluster.mode \"ssh\"", true);
    return;
  }
  if (!hosts) {
    r.require("hosts", "the hosts: an array of {\"address\", ...} or the path of an inventory file");
    return;
  }
  c.hosts = hosts->is_string() ? read_inventory(ctx, hosts->get<std::string>(), scenario_file)
                               : read_hosts(ctx, *hosts, "cluster.hosts");
  if (c.hosts.empty()) return;
  if (!nodes_given) c.nodes = std::min<int>(static_cast<int>(c.hosts.size()), kMaxAgentNodes);
  else if (c.nodes > static_cast<int>(c.hosts.size()))
    ctx.error("cluster.nodes", fmt::format("{} nodes, but cluster.hosts lists {} host{}: one host per node", c.nodes,
                                           c.hosts.size(), c.hosts.size() == 1 ? "" : "s"));
  c.hosts.resize(std::min(c.hosts.size(), static_cast<std::size_t>(c.nodes)));
}

}  // namespace

std::vector<HostSpec> load_inventory(const std::string& file) { return parse_inventory(file, read_scenario_file(file)); }

ClusterSpec parse_cluster(ParseContext& ctx, const json* value, const std::string& scenario_file) {
  ClusterSpec c;
  if (!value) return c;
  ObjectReader r(ctx, *value, "cluster", {"nodes", "ranks_per_node", "mode", "link", "hosts", "ssh", "agent", "slurm"});
  if (auto m = r.choice("mode", {"auto", "namespaces", "local", "ssh", "local-agents", "slurm"}))
    c.mode = *m == "namespaces"     ? ClusterMode::kNamespaces
             : *m == "local"        ? ClusterMode::kLocal
             : *m == "ssh"          ? ClusterMode::kSsh
             : *m == "local-agents" ? ClusterMode::kLocalAgents
             : *m == "slurm"        ? ClusterMode::kSlurm
                                    : ClusterMode::kAuto;
  const int max_nodes = runs_agents(c.mode) ? kMaxAgentNodes : 64;
  if (auto v = r.integer("nodes", 1, max_nodes)) c.nodes = static_cast<int>(*v);
  if (auto v = r.integer("ranks_per_node", 1, 64)) c.ranks_per_node = static_cast<int>(*v);
  parse_hosts(ctx, r, c, scenario_file, r.has("nodes"));
  if (c.world_size() > 256) ctx.error("cluster", fmt::format("nodes x ranks_per_node is {}; at most 256 ranks", c.world_size()));
  if (const json* link = r.raw("link")) {
    ObjectReader l(ctx, *link, "cluster.link", {"rate", "delay"});
    c.link.rate = l.rate("rate");
    c.link.delay = l.duration("delay");
    if (runs_agents(c.mode) && (c.link.rate || c.link.delay))
      ctx.error("cluster.link", "shapes the links of the namespaced cluster; on hosts, use a network fault for the run");
  }
  if (!runs_agents(c.mode) && (r.has("ssh") || r.has("agent")))
    ctx.error(r.has("ssh") ? "cluster.ssh" : "cluster.agent", "only for the agent modes: \"ssh\", \"slurm\", \"local-agents\"", true);
  if (c.mode != ClusterMode::kSlurm && r.has("slurm")) ctx.error("cluster.slurm", "only for cluster.mode \"slurm\"", true);
  parse_remote(ctx, r, c);
  parse_slurm(ctx, r, c);
  return c;
}

}  // namespace chaosbench::harness
