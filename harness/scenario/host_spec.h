// One host of a multi-host cluster (cluster.hosts, inline or an inventory file): where
// the controller reaches it and what faults may touch there. Node N of the scenario runs
// on hosts[N].
#pragma once

#include <string>
#include <vector>

namespace chaosbench::harness {

struct HostSpec {
  std::string name;     // "h0": logs, messages, the `host` label; default "node<N>"
  std::string address;  // IPv4: ssh reaches it there, peers and faults use it
  std::string user;     // the ssh login; "": ssh's own default (its config, then $USER)
  int port = 22;        // sshd's port
  // The interfaces faults may change on this host (tc qdiscs, filters); a network fault
  // whose traffic leaves by another one is refused before anything is applied.
  std::vector<std::string> interfaces;
};

}  // namespace chaosbench::harness
