#include "harness/agent/link_handshake.h"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "common/json/json_values.h"
#include "harness/agent/link_auth.h"

namespace chaosbench::harness {

using common::json_text;
using common::json_integer;
namespace {

using json = nlohmann::json;
using std::chrono::milliseconds;

// The next frame, which must be of type `want` (a `refused` is the peer's reason).
json expect(LinkChannel& link, MessageType want, milliseconds timeout, const char* waiting_for) {
  auto frame = link.receive(timeout);
  if (!frame) throw LinkError(fmt::format("no {} within {} ms", waiting_for, timeout.count()));
  json j = json::parse(frame->payload, nullptr, /*allow_exceptions=*/false);
  if (frame->type == MessageType::kRefused) throw LinkError(fmt::format("refused: {}", json_text(j, "why", "no reason")));
  if (frame->type != want || !j.is_object())
    throw LinkError(fmt::format("expected {}, got a {} frame", waiting_for, message_type_name(static_cast<std::uint8_t>(frame->type))));
  return j;
}

template <class Error = LinkError>
[[noreturn]] void refuse(LinkChannel& link, const std::string& why) {
  try {
    link.send(MessageType::kRefused, json{{"why", why}}.dump());
  } catch (const LinkError&) {
  }
  link.close(why);
  throw Error(why);
}

std::string text(const json& j, const char* key) { return json_text(j, key); }

}  // namespace

void agent_handshake(LinkChannel& link, const std::string& secret, AgentHello hello, milliseconds timeout) {
  hello.nonce = make_link_nonce();
  link.send(MessageType::kHello, json{{"version", hello.version}, {"run_id", hello.run_id}, {"host", hello.host},
                                      {"node", hello.node}, {"hostname", hello.hostname}, {"address", hello.address}, {"pid", hello.pid},
                                      {"nonce", hello.nonce}}
                                     .dump());
  const json welcome = expect(link, MessageType::kWelcome, timeout, "welcome");
  if (text(welcome, "version") != hello.version)
    refuse(link, fmt::format("version mismatch: controller {}, agent {}", text(welcome, "version"), hello.version));
  if (!check_link_proof(secret, hello.run_id, "controller", hello.nonce, text(welcome, "proof")))
    refuse(link, "the controller's proof is wrong (not this run's secret)");
  const std::string controller_nonce = text(welcome, "nonce");
  if (controller_nonce.size() < 32) refuse(link, "the controller sent no nonce");
  link.send(MessageType::kProof, json{{"proof", link_proof(secret, hello.run_id, "agent", controller_nonce)}}.dump());
}

AgentHello controller_handshake(LinkChannel& link, const std::string& secret, const std::string& run_id,
                                const std::string& version, int nodes, milliseconds timeout) {
  const json j = expect(link, MessageType::kHello, timeout, "hello");
  AgentHello h;
  h.version = text(j, "version");
  h.run_id = text(j, "run_id");
  h.host = text(j, "host");
  h.hostname = text(j, "hostname");
  h.address = text(j, "address");
  h.nonce = text(j, "nonce");
  const auto node = json_integer<std::int64_t>(j, "node", -1);
  h.node = node >= 0 && node < nodes ? static_cast<int>(node) : -1;
  h.pid = static_cast<pid_t>(json_integer<std::int64_t>(j, "pid", 0));
  const std::string who = fmt::format("agent {} (node {})", h.host, h.node);
  if (h.version != version)
    refuse<VersionMismatch>(link, fmt::format("{} runs chaosbench {}, the controller {}: install the same version on every host",
                             who, h.version.empty() ? "(unknown)" : h.version, version));
  if (h.run_id != run_id) refuse(link, fmt::format("{} belongs to run {}, not {}", who, h.run_id, run_id));
  if (h.node < 0 || h.node >= nodes) refuse(link, fmt::format("{}: no such node", who));
  if (h.nonce.size() < 32) refuse(link, fmt::format("{} sent no nonce", who));
  const std::string nonce = make_link_nonce();
  link.send(MessageType::kWelcome,
            json{{"version", version}, {"nonce", nonce}, {"proof", link_proof(secret, run_id, "controller", h.nonce)}}.dump());
  const json proof = expect(link, MessageType::kProof, timeout, "proof");
  if (!check_link_proof(secret, run_id, "agent", nonce, text(proof, "proof")))
    refuse(link, fmt::format("{} could not prove it knows the run's secret", who));
  return h;
}

}  // namespace chaosbench::harness
