// What the launcher knows of this run that a workload's launch needs: paths, the metrics
// address, the nodes' addresses and rendezvous stores, the seed, the master port.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace chaosbench::harness {

struct LaunchContext {
  std::string self_exe;         // this chaosbench binary, for built-in workers
  std::string run_dir;          // --out, absolute
  std::string runtime_dir;      // sockets and the rendezvous store
  std::string metrics_address;  // "unix:/.../metrics.sock"
  std::string scenario_dir;     // directory of the scenario file, absolute
  std::string run_id;           // unique per run: separates rendezvous keys
  int master_port = 29500;
  std::uint64_t seed = 42;  // the scenario's (after --seed)
  std::vector<std::string> node_addrs;  // per node; "127.0.0.1" for local processes
  // Per node, the built-in workloads' rendezvous store ("tcp:ADDR:PORT" with agents);
  // empty, or "" for a node: "file:<runtime_dir>/store".
  std::vector<std::string> node_stores;
  // The nodes' network interface in namespaces ("eth0"), for the *_SOCKET_IFNAME variables
  // distributed libraries choose their address by; empty for local processes.
  std::string node_interface;
  // Extra environment for every process (the BLAS kernel the harness chose), below the
  // scenario's own `env`.
  std::map<std::string, std::string> env;
  std::vector<int> only_nodes;  // non-empty: ranks go on these nodes only (a restart without a dead node)

  // The rendezvous store the built-in workloads' rank on `node` meets the others in.
  std::string store_for(int node) const;
  // `path` as the scenario means it: relative to the scenario file's directory.
  std::string scenario_relative(const std::string& path) const;
};

}  // namespace chaosbench::harness
