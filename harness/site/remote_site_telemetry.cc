// The link mesh and the node telemetry across hosts (remote_site.h start_telemetry): two
// rounds of commands, open (each agent binds its node's mesh socket and says its port)
// and start (every node's port), then one to stop. Each round goes to every agent first
// and then waits on one deadline, so a hung agent costs it once, and the agents start
// within milliseconds of each other.
#include <fmt/format.h>
#include <iomanip>
#include <random>
#include <sstream>

#include "common/json/json_values.h"
#include "harness/site/remote_site.h"

namespace chaosbench::harness {

using common::json_text;
using common::json_number;
using common::json_integer;

using json = nlohmann::json;
using std::chrono::milliseconds;
using Clock = std::chrono::steady_clock;

namespace {

constexpr milliseconds kTelemetryTimeout{15000};

// The run's mesh token, shared by every agent: a datagram without it is not the run's.
std::string mesh_token() {
  std::random_device rd;
  std::uint64_t token = 0;
  while (token == 0) token = (static_cast<std::uint64_t>(rd()) << 32) ^ rd();
  std::ostringstream out;
  out << std::hex << std::setw(16) << std::setfill('0') << token;
  return out.str();
}

}  // namespace

// `command` to every node in `to` (all when empty), then each reply within one deadline:
// the replies by node (null where none came), a note for each that failed.
std::vector<json> RemoteSite::telemetry_round(const json& command, const std::vector<bool>& to,
                                              std::vector<std::string>* notes) {
  const auto nodes = static_cast<std::size_t>(cluster_.nodes);
  std::vector<std::uint64_t> ids(nodes, 0);
  std::vector<json> replies(nodes);
  for (std::size_t n = 0; n < nodes; ++n) {
    if ((!to.empty() && !to[n]) || hub_->lost(static_cast<int>(n))) continue;
    try {
      ids[n] = hub_->send(static_cast<int>(n), command);
    } catch (const AgentError& e) {
      if (notes) notes->push_back(fmt::format("{}: {}", launcher_->host_label(static_cast<int>(n)), e.what()));
    }
  }
  const auto deadline = Clock::now() + kTelemetryTimeout;
  for (std::size_t n = 0; n < nodes; ++n) {
    if (ids[n] == 0) continue;
    try {
      const auto left = std::max(milliseconds(1), std::chrono::duration_cast<milliseconds>(deadline - Clock::now()));
      replies[n] = hub_->wait_reply(static_cast<int>(n), ids[n], left);
    } catch (const AgentError& e) {
      if (notes) notes->push_back(fmt::format("{}: {}", launcher_->host_label(static_cast<int>(n)), e.what()));
    }
  }
  return replies;
}

bool RemoteSite::start_telemetry(const MeshSpec& spec, bool mesh, std::vector<std::string>* notes) {
  const auto nodes = static_cast<std::size_t>(cluster_.nodes);
  json open{{"op", "telemetry_open"}, {"window_ms", std::chrono::duration_cast<milliseconds>(spec.window.value).count()}};
  open["mesh"] = mesh ? json{{"rate", spec.rate}, {"token", mesh_token()}} : json();
  const auto opened = telemetry_round(open, {}, notes);
  std::vector<int> ports(nodes, 0);
  std::vector<bool> started(nodes, false);
  for (std::size_t n = 0; n < nodes; ++n) {
    if (!opened[n].is_object()) continue;
    started[n] = true;
    ports[n] = static_cast<int>(std::clamp<std::int64_t>(json_integer<std::int64_t>(opened[n], "port", 0), 0, 65535));
    for (const char* part : {"mesh_error", "telemetry_error"})
      if (auto why = json_text(opened[n], part); !why.empty())
        notes->push_back(fmt::format("{}: {}", launcher_->host_label(static_cast<int>(n)), why));
  }
  if (std::find(started.begin(), started.end(), true) == started.end()) return false;
  telemetry_ = true;
  std::vector<std::string> failed;
  telemetry_round({{"op", "telemetry_start"}, {"ports", ports}}, started, &failed);
  if (failed.empty()) return true;
  // A node whose socket was bound but never reads would look like a lossy NIC to every
  // peer: a partial start is no start.
  for (auto& f : failed) notes->push_back(std::move(f));
  notes->push_back("the agents' telemetry is off for the run: a host could not start it");
  stop_telemetry();
  return false;
}

json RemoteSite::stop_telemetry() {
  if (!telemetry_) return json();
  telemetry_ = false;
  json total{{"probes", 0.0}, {"echoes", 0.0}, {"refused", 0.0}, {"cpu_s", 0.0}, {"wall_s", 0.0}};
  bool any = false;
  for (const json& reply : telemetry_round({{"op", "telemetry_stop"}}, {}, nullptr)) {
    const json mesh = reply.is_object() ? reply.value("mesh", json()) : json();
    if (!mesh.is_object() || json_number(mesh, "wall_s") <= 0) continue;
    any = true;
    for (const char* k : {"probes", "echoes", "refused", "cpu_s"}) total[k] = total[k].get<double>() + json_number(mesh, k);
    total["wall_s"] = std::max(total["wall_s"].get<double>(), json_number(mesh, "wall_s"));
  }
  return any ? total : json();
}

}  // namespace chaosbench::harness
