// How the controller reaches the hosts of a multi-host cluster and what runs there:
// cluster.ssh and cluster.agent of a scenario (docs/scenario-format.md).
#pragma once

#include <chrono>
#include <optional>
#include <string>
#include <vector>

#include "common/values/units.h"

namespace chaosbench::harness {

struct RemoteSpec {
  // The system OpenSSH client's settings (BatchMode and multiplexing are always on).
  std::string ssh_config;              // -F FILE; "": the user's ~/.ssh/config
  std::string ssh_identity;            // -i FILE; "": ssh's own choice
  std::vector<std::string> ssh_options;  // more "-o" values ("StrictHostKeyChecking=yes", ...)
  // The chaosbench binary on the hosts: a path or a name looked up in the login's PATH.
  std::string agent_command = "chaosbench";
  // The dead-man switch: an agent whose controller is silent this long reverts every
  // fault and stops every rank.
  common::Duration agent_timeout{std::chrono::seconds(10)};
  // The controller's TCP port for the agents' links (cluster.agent.port), and port + 1 for
  // the ranks' rendezvous store: fixed ports a cluster's firewall can open. 0: ephemeral.
  int agent_port = 0;
  // Slurm (cluster.slurm): used when srun makes the allocation itself, outside salloc or
  // sbatch; inside one, the allocation's own partition and limit hold.
  std::string slurm_partition;             // --partition; "": the cluster's default
  std::optional<common::Duration> slurm_time_limit;  // --time
  std::vector<std::string> slurm_options;  // more srun options ("--exclusive", "--constraint=x")
  std::vector<std::string> slurm_interfaces;  // where faults may act on every node (as a host's "interfaces")
};

}  // namespace chaosbench::harness
