// What the controller learns from Slurm before it starts the agents' step: whether it
// runs inside an allocation (salloc, sbatch: SLURM_JOB_ID) and how many nodes that has,
// and the address of a node the step will use, to find the controller's own address on
// the route to the nodes (the agents dial back to it). Reads the environment and runs
// `scontrol show hostnames` and `sinfo`, the Slurm client's own commands.
// Threads: any; blocks for the commands (tens of milliseconds).
#pragma once

#include <optional>
#include <string>

#include "harness/scenario/remote_spec.h"

namespace chaosbench::harness {

struct SlurmAllocation {
  std::string job_id;  // "" outside an allocation: srun makes one
  int nodes = 0;       // the allocation's node count
};

// The allocation this process runs in, if any (SLURM_JOB_ID, SLURM_JOB_NUM_NODES).
std::optional<SlurmAllocation> current_slurm_allocation();

// The IPv4 address of the first node the step may run on (the allocation's first node,
// else the first responding node of the partition). Throws HostError with Slurm's
// message when there is none or the commands fail.
std::string first_slurm_node_address(const RemoteSpec& remote);

}  // namespace chaosbench::harness
