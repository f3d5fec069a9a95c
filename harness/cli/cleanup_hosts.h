// `chaosbench cleanup --hosts INVENTORY`: cleanup on every host of an inventory, over SSH.
#pragma once

#include <string>
#include <vector>

namespace chaosbench::harness {

struct CleanupHostsOptions {
  std::string inventory;                  // the inventory file, as cluster.hosts takes it
  std::string ssh_config;                 // -F; "": the user's
  std::string ssh_identity;               // -i; "": ssh's own choice
  std::vector<std::string> ssh_options;   // more -o values ("Key=value")
  std::string agent_command = "chaosbench";  // the binary on the hosts
  bool dry_run = false;
};

// Returns 0 when every host is clean, 1 when some host's cleanup left something, 3 when
// some host could not be reached. Throws ScenarioError for a bad inventory.
int cleanup_hosts(const CleanupHostsOptions& options);

}  // namespace chaosbench::harness
