// The link's handshake, both sides (docs/agent-protocol.md, "Handshake"): the agent's
// hello, the controller's welcome with its proof, the agent's proof. Either side refuses
// a peer that fails a check with a `refused` frame naming why, and throws LinkError with
// the same words; nothing but the handshake's frames is accepted before it completes.
// Threads: the caller's; each call blocks up to its timeout.
#pragma once

#include <chrono>
#include <string>
#include <sys/types.h>

#include "harness/agent/link_channel.h"

namespace chaosbench::harness {

// The agent runs another chaosbench version: no retry can help, so the run stops at once.
class VersionMismatch : public LinkError {
 public:
  using LinkError::LinkError;
};

// What an agent says of itself in its hello.
struct AgentHello {
  std::string version;   // chaosbench's version: must equal the controller's
  std::string run_id;
  std::string host;      // the name the controller gave it (the inventory's)
  int node = -1;         // the node it serves
  std::string hostname;  // what the host calls itself (gethostname)
  std::string address;   // the agent's end of the link: its host's address towards the controller
  pid_t pid = 0;
  std::string nonce;
};

// The agent's side. Throws LinkError when the controller refuses, proves nothing, or the
// link breaks within `timeout`.
void agent_handshake(LinkChannel& link, const std::string& secret, AgentHello hello,
                     std::chrono::milliseconds timeout);

// The controller's side: reads the hello, checks run and version (and that the node is
// below `nodes`), welcomes, checks the agent's proof. Returns the hello. Throws LinkError
// with the reason after refusing (VersionMismatch for another version).
AgentHello controller_handshake(LinkChannel& link, const std::string& secret, const std::string& run_id,
                                const std::string& version, int nodes, std::chrono::milliseconds timeout);

}  // namespace chaosbench::harness
