// The link mesh and the node telemetry across hosts (remote_site.h start_telemetry): two
// rounds of commands, open (each agent binds its node's mesh socket and says its port)
// and start (every node's port), then one to stop.
#include <fmt/format.h>
#include <iomanip>
#include <random>
#include <sstream>

#include "harness/agent/json_fields.h"
#include "harness/runner/remote_site.h"

namespace chaosbench::harness {

using json = nlohmann::json;
using std::chrono::milliseconds;

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

std::vector<std::string> RemoteSite::start_telemetry(const MeshSpec& spec, bool mesh) {
  std::vector<std::string> notes;
  const int nodes = cluster_.nodes;
  json open{{"op", "telemetry_open"}, {"window_ms", std::chrono::duration_cast<milliseconds>(spec.window.value).count()}};
  open["mesh"] = mesh ? json{{"rate", spec.rate}, {"token", mesh_token()}} : json();
  std::vector<std::uint64_t> ids(static_cast<std::size_t>(nodes), 0);
  std::vector<int> ports(static_cast<std::size_t>(nodes), 0);
  std::vector<bool> opened(static_cast<std::size_t>(nodes), false);
  for (int n = 0; n < nodes; ++n) {
    try {
      ids[static_cast<std::size_t>(n)] = hub_->send(n, open);
    } catch (const AgentError& e) {
      notes.push_back(fmt::format("{}: {}", launcher_->host_label(n), e.what()));
    }
  }
  for (int n = 0; n < nodes; ++n) {
    const auto i = static_cast<std::size_t>(n);
    if (ids[i] == 0) continue;
    try {
      const json reply = hub_->wait_reply(n, ids[i], kTelemetryTimeout);
      opened[i] = true;
      ports[i] = static_cast<int>(std::clamp<std::int64_t>(json_integer(reply, "port", 0), 0, 65535));
      for (const char* part : {"mesh_error", "telemetry_error"})
        if (auto why = json_text(reply, part); !why.empty()) notes.push_back(fmt::format("{}: {}", launcher_->host_label(n), why));
    } catch (const AgentError& e) {
      notes.push_back(fmt::format("{}: {}", launcher_->host_label(n), e.what()));
    }
  }
  telemetry_ = true;
  for (int n = 0; n < nodes; ++n) {
    if (!opened[static_cast<std::size_t>(n)]) continue;
    try {
      hub_->call(n, {{"op", "telemetry_start"}, {"ports", ports}}, kTelemetryTimeout);
    } catch (const AgentError& e) {
      notes.push_back(fmt::format("{}: {}", launcher_->host_label(n), e.what()));
    }
  }
  return notes;
}

json RemoteSite::stop_telemetry() {
  if (!telemetry_) return json();
  telemetry_ = false;
  json total{{"probes", 0.0}, {"echoes", 0.0}, {"refused", 0.0}, {"cpu_s", 0.0}, {"wall_s", 0.0}};
  bool any = false;
  for (int n = 0; n < cluster_.nodes; ++n) {
    if (hub_->lost(n)) continue;
    try {
      const json mesh = hub_->call(n, {{"op", "telemetry_stop"}}, kTelemetryTimeout).value("mesh", json());
      if (!mesh.is_object() || json_number(mesh, "wall_s") <= 0) continue;
      any = true;
      for (const char* k : {"probes", "echoes", "refused", "cpu_s"}) total[k] = total[k].get<double>() + json_number(mesh, k);
      total["wall_s"] = std::max(total["wall_s"].get<double>(), json_number(mesh, "wall_s"));
    } catch (const AgentError&) {
    }
  }
  return any ? total : json();
}

}  // namespace chaosbench::harness
