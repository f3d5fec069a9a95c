#include "harness/agent/host_interfaces.h"

#include <arpa/inet.h>
#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <fmt/format.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <netinet/in.h>
#include <sys/socket.h>

namespace chaosbench::harness {
namespace {

}  // namespace

std::string source_address_towards(const std::string& peer, std::string* why) {
  sockaddr_in to{};
  to.sin_family = AF_INET;
  to.sin_port = htons(9);
  if (::inet_pton(AF_INET, peer.c_str(), &to.sin_addr) != 1) {
    *why = fmt::format("{} is not an IPv4 address", peer);
    return "";
  }
  common::UniqueFd fd(::socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0));
  sockaddr_in from{};
  socklen_t len = sizeof(from);
  if (!fd || ::connect(fd.get(), reinterpret_cast<sockaddr*>(&to), sizeof(to)) != 0 ||
      ::getsockname(fd.get(), reinterpret_cast<sockaddr*>(&from), &len) != 0) {
    *why = fmt::format("no route to {}: {}", peer, std::strerror(errno));
    return "";
  }
  char text[INET_ADDRSTRLEN] = {};
  ::inet_ntop(AF_INET, &from.sin_addr, text, sizeof(text));
  return text;
}

namespace {

std::string interface_with(const std::string& address) {
  ifaddrs* all = nullptr;
  if (::getifaddrs(&all) != 0) return "";
  std::string name;
  for (ifaddrs* i = all; i && name.empty(); i = i->ifa_next) {
    if (!i->ifa_addr || i->ifa_addr->sa_family != AF_INET) continue;
    char text[INET_ADDRSTRLEN] = {};
    ::inet_ntop(AF_INET, &reinterpret_cast<sockaddr_in*>(i->ifa_addr)->sin_addr, text, sizeof(text));
    if (address == text) name = i->ifa_name;
  }
  ::freeifaddrs(all);
  return name;
}

}  // namespace

std::string interface_towards(const std::vector<std::string>& addresses, int self, std::string* why) {
  std::string chosen;
  for (std::size_t i = 0; i < addresses.size(); ++i) {
    if (static_cast<int>(i) == self || addresses[i] == addresses.at(static_cast<std::size_t>(self))) continue;
    const std::string source = source_address_towards(addresses[i], why);
    if (source.empty()) return "";
    const std::string name = interface_with(source);
    if (name.empty() || name == "lo") {
      *why = fmt::format("traffic to {} does not leave by a network interface (from {})", addresses[i], source);
      return "";
    }
    if (!chosen.empty() && name != chosen) {
      *why = fmt::format("the job's hosts are reached through {} and {}; faults act on one interface", chosen, name);
      return "";
    }
    chosen = name;
  }
  if (chosen.empty()) *why = "the job has no other host";
  return chosen;
}

int free_tcp_port() {
  common::UniqueFd fd(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  socklen_t len = sizeof(addr);
  if (!fd || ::bind(fd.get(), reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0 ||
      ::getsockname(fd.get(), reinterpret_cast<sockaddr*>(&addr), &len) != 0)
    throw std::runtime_error(fmt::format("no free TCP port: {}", std::strerror(errno)));
  return ntohs(addr.sin_port);
}

common::UniqueFd own_netns() { return common::UniqueFd(::open("/proc/self/ns/net", O_RDONLY | O_CLOEXEC)); }

}  // namespace chaosbench::harness
