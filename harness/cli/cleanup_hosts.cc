// chaosbench cleanup --hosts INVENTORY: `chaosbench cleanup` on every host of an inventory
// over SSH (BatchMode, as the ssh cluster mode logs in), so what dead agents left on any
// host is reverted from one place. Hosts are done 16 at a time; each host's output comes
// back whole, prefixed with its name.
#include <algorithm>
#include <fmt/format.h>
#include <future>
#include <iostream>

#include "common/kernel/netns.h"
#include "harness/cli/cleanup_hosts.h"
#include "harness/core/exit_code.h"
#include "harness/site/agent_launcher.h"
#include "harness/scenario/scenario_loader.h"

namespace chaosbench::harness {
namespace {

constexpr std::size_t kParallel = 16;
constexpr std::chrono::seconds kPerHost{120};

struct HostOutcome {
  int exit_code = 0;
  std::string text;
};

HostOutcome clean_host(const HostSpec& h, const CleanupHostsOptions& o) {
  std::vector<std::string> argv{"ssh"};
  if (!o.ssh_config.empty()) argv.insert(argv.end(), {"-F", o.ssh_config});
  if (!o.ssh_identity.empty()) argv.insert(argv.end(), {"-i", o.ssh_identity});
  argv.insert(argv.end(), {"-o", "BatchMode=yes", "-o", "ConnectTimeout=10", "-T", "-p", std::to_string(h.port)});
  for (const auto& opt : o.ssh_options) argv.insert(argv.end(), {"-o", opt});
  if (!h.user.empty()) argv.insert(argv.end(), {"-l", h.user});
  argv.push_back(h.address);
  argv.push_back("--");
  std::string command = "exec " + shell_quote(o.agent_command) + " cleanup";
  if (o.dry_run) command += " --dry-run";
  argv.push_back(command);
  auto r = common::run_in_netns(-1, argv, kPerHost);
  HostOutcome out;
  out.exit_code = r.exit_code;
  std::string text = r.out + r.err;
  if (r.timed_out) text += fmt::format("timed out after {} s\n", kPerHost.count());
  for (std::size_t at = 0; at < text.size();) {
    std::size_t end = text.find('\n', at);
    if (end == std::string::npos) end = text.size();
    out.text += fmt::format("{}: {}\n", h.name, text.substr(at, end - at));
    at = end + 1;
  }
  return out;
}

}  // namespace

int cleanup_hosts(const CleanupHostsOptions& o) {
  const auto hosts = load_inventory(o.inventory);  // ScenarioError: exit 2 with the place
  int rc = kExitPass;
  for (std::size_t first = 0; first < hosts.size(); first += kParallel) {
    std::vector<std::future<HostOutcome>> batch;
    for (std::size_t i = first; i < std::min(hosts.size(), first + kParallel); ++i)
      batch.push_back(std::async(std::launch::async, clean_host, std::cref(hosts[i]), std::cref(o)));
    for (std::size_t k = 0; k < batch.size(); ++k) {
      const auto outcome = batch[k].get();
      std::cout << outcome.text;
      const auto& h = hosts[first + k];
      if (outcome.exit_code == 255 || outcome.exit_code < 0) {
        std::cout << fmt::format("{}: could not log in to {} (ssh exit {})\n", h.name, h.address, outcome.exit_code);
        rc = std::max(rc, static_cast<int>(kExitHost));
      } else if (outcome.exit_code != 0) {
        rc = std::max(rc, static_cast<int>(kExitCheckFailed));
      }
    }
  }
  return rc;
}

}  // namespace chaosbench::harness
