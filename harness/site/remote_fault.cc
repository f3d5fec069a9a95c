#include "harness/site/remote_fault.h"

#include <algorithm>
#include <fmt/format.h>

#include "common/json/json_values.h"

namespace chaosbench::harness {

using common::json_text;

using json = nlohmann::json;

namespace {

constexpr std::chrono::seconds kFaultReply{15};

// What is left of one deadline shared by all hosts' replies (at least 1 ms: a reply that
// is already there is still taken).
std::chrono::milliseconds time_left(std::chrono::steady_clock::time_point deadline) {
  return std::max(std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now()),
                  std::chrono::milliseconds(1));
}

}  // namespace

RemoteFault::RemoteFault(AgentHub& hub, std::uint64_t id, json command, std::vector<int> nodes, bool reversible,
                         std::function<pid_t(int, pid_t)> local_pid)
    : hub_(hub), id_(id), command_(std::move(command)), nodes_(std::move(nodes)), reversible_(reversible),
      local_pid_(std::move(local_pid)) {}

// Every host gets the command before any reply is awaited: the fault's spread across
// hosts is one round trip, not one per host.
void RemoteFault::do_apply(const faults::ResolvedTarget&) {
  json command = command_;
  command["op"] = "apply";
  command["fault"] = id_;
  std::vector<std::pair<int, std::uint64_t>> sent;
  std::string errors;
  for (int node : nodes_) {
    try {
      sent.emplace_back(node, hub_.send(node, command));
    } catch (const AgentError& e) {
      errors += (errors.empty() ? "" : "; ") + std::string(e.what());
    }
  }
  const auto deadline = std::chrono::steady_clock::now() + kFaultReply;
  for (const auto& [node, request] : sent) {
    // Every host the command reached is reverted if the fault fails: one whose reply is
    // late may still apply it (its revert comes after the apply on the same link).
    applied_on_.push_back(node);
    try {
      const json reply = hub_.wait_reply(node, request, time_left(deadline));
      backend_ = json_text(reply, "backend", backend_);
      if (reply.contains("ended") && reply["ended"].is_array())
        for (const auto& pid : reply["ended"])
          if (pid.is_number_integer()) ended_.push_back(local_pid_(node, pid.get<pid_t>()));
    } catch (const AgentError& e) {
      errors += (errors.empty() ? "" : "; ") + std::string(e.what());
    }
  }
  if (!errors.empty()) throw faults::FaultError(errors);  // Fault::apply reverts applied_on_
}

void RemoteFault::do_revert() {
  std::vector<std::pair<int, std::uint64_t>> sent;
  std::string errors;
  for (int node : applied_on_) {
    try {
      sent.emplace_back(node, hub_.send(node, json{{"op", "revert"}, {"fault", id_}}));
    } catch (const AgentError& e) {
      // A lost agent has reverted on its own (dead-man switch) or left it to cleanup.
      errors += (errors.empty() ? "" : "; ") + std::string(e.what());
    }
  }
  const auto deadline = std::chrono::steady_clock::now() + kFaultReply;
  for (const auto& [node, request] : sent) {
    try {
      const json reply = hub_.wait_reply(node, request, time_left(deadline));
      if (reply.contains("effect") && reply["effect"].is_object())
        for (const auto& [k, v] : reply["effect"].items())
          if (v.is_number()) effect_[k] = v.get<double>();
    } catch (const AgentError& e) {
      errors += (errors.empty() ? "" : "; ") + std::string(e.what());
    }
  }
  applied_on_.clear();
  if (!errors.empty()) throw faults::FaultError(errors);
}

}  // namespace chaosbench::harness
