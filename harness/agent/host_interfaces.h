// What an agent learns of its host's network: which interface carries its traffic to the
// job's other hosts (where network faults act, so it must be allow-listed), a free TCP
// port for a workload's rendezvous, and its own network namespace. Read from the
// kernel's routing (a UDP connect chooses the route without sending anything) and
// getifaddrs(3).
// Threads: any.
#pragma once

#include <string>
#include <vector>

#include "common/files/unique_fd.h"

namespace chaosbench::harness {

// The interface this host's packets to every other address in `addresses` (the job's
// hosts by node; `self` is this host's index) leave by. "" with *why when a route is
// missing or the peers are reached through different interfaces.
std::string interface_towards(const std::vector<std::string>& addresses, int self, std::string* why);

// The local address the kernel would send from towards IPv4 `peer` (nothing is sent), or
// "" with *why.
std::string source_address_towards(const std::string& peer, std::string* why);

// A TCP port free on every local address now (bound, then released for the workload).
int free_tcp_port();

// This process's network namespace, opened (for faults that act in it).
common::UniqueFd own_netns();

}  // namespace chaosbench::harness
