#include "harness/site/slurm_allocation.h"

#include <arpa/inet.h>
#include <cstdlib>
#include <fmt/format.h>
#include <map>
#include <netdb.h>
#include <sstream>
#include <vector>

#include "common/kernel/netns.h"
#include "harness/core/host_error.h"

namespace chaosbench::harness {
namespace {

constexpr std::chrono::seconds kSlurmCommand{15};

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);)
    if (!line.empty()) out.push_back(line);
  return out;
}

std::string run_slurm(const std::vector<std::string>& argv) {
  auto r = common::run_in_netns(-1, argv, kSlurmCommand);
  if (r.exit_code != 0)
    throw HostError(fmt::format("{} failed{}: {}", argv[0], r.timed_out ? " (timed out)" : "",
                                r.err.empty() ? fmt::format("exit {}", r.exit_code) : r.err));
  return r.out;
}

// A NodeAddr as an IPv4 dotted quad (it may be a name).
std::string resolve_ipv4(const std::string& addr) {
  in_addr a{};
  if (::inet_pton(AF_INET, addr.c_str(), &a) == 1) return addr;
  addrinfo hints{};
  hints.ai_family = AF_INET;
  addrinfo* res = nullptr;
  if (::getaddrinfo(addr.c_str(), nullptr, &hints, &res) != 0 || !res) return "";
  char text[INET_ADDRSTRLEN] = {};
  ::inet_ntop(AF_INET, &reinterpret_cast<sockaddr_in*>(res->ai_addr)->sin_addr, text, sizeof(text));
  ::freeaddrinfo(res);
  return text;
}

}  // namespace

std::optional<SlurmAllocation> current_slurm_allocation() {
  const char* id = std::getenv("SLURM_JOB_ID");
  if (!id || !*id) return std::nullopt;
  const char* n = std::getenv("SLURM_JOB_NUM_NODES");
  if (!n) n = std::getenv("SLURM_NNODES");
  return SlurmAllocation{id, n ? std::atoi(n) : 0};
}

std::string first_slurm_node_address(const RemoteSpec& remote) {
  std::vector<std::string> names;
  if (const char* list = std::getenv("SLURM_JOB_NODELIST"); list && *list)
    names = lines_of(run_slurm({"scontrol", "show", "hostnames", list}));
  std::vector<std::string> sinfo{"sinfo", "-h", "-N", "-r", "-o", "%N %o"};
  if (!remote.slurm_partition.empty() && names.empty()) sinfo.insert(sinfo.end(), {"-p", remote.slurm_partition});
  std::map<std::string, std::string> address_of;
  std::string first;
  for (const auto& line : lines_of(run_slurm(sinfo))) {
    std::istringstream in(line);
    std::string name, addr;
    if (!(in >> name >> addr)) continue;
    address_of.emplace(name, addr);
    if (first.empty()) first = name;
  }
  const std::string node = names.empty() ? first : names.front();
  auto it = address_of.find(node);
  if (it == address_of.end())
    throw HostError(node.empty() ? std::string("Slurm lists no responding node (sinfo -N -r)")
                                 : fmt::format("Slurm does not list node {} as responding (sinfo -N -r)", node));
  const std::string ip = resolve_ipv4(it->second);
  if (ip.empty()) throw HostError(fmt::format("node {}'s address {} does not resolve to IPv4", node, it->second));
  return ip;
}

}  // namespace chaosbench::harness
