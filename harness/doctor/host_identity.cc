#include "harness/doctor/host_identity.h"

#include <charconv>
#include <fmt/format.h>
#include <sched.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "harness/doctor/probe_files.h"

namespace chaosbench::harness {
namespace {

// The value after "Key:" on the line that starts with it.
std::optional<std::string_view> field(std::string_view text, std::string_view key) {
  for (auto line : split_lines(text))
    if (line.starts_with(key) && line.size() > key.size() && line[key.size()] == ':')
      return trim(line.substr(key.size() + 1));
  return std::nullopt;
}

}  // namespace

std::optional<std::uint64_t> parse_cap_eff(std::string_view proc_status) {
  auto value = field(proc_status, "CapEff");
  if (!value || value->empty()) return std::nullopt;
  std::uint64_t mask = 0;
  auto [end, ec] = std::from_chars(value->data(), value->data() + value->size(), mask, 16);
  if (ec != std::errc() || end != value->data() + value->size()) return std::nullopt;
  return mask;
}

std::optional<std::uint64_t> parse_mem_total(std::string_view meminfo) {
  auto value = field(meminfo, "MemTotal");
  if (!value) return std::nullopt;
  std::uint64_t kib = 0;
  auto [end, ec] = std::from_chars(value->data(), value->data() + value->size(), kib);
  if (ec != std::errc() || trim(std::string_view(end, value->data() + value->size() - end)) != "kB")
    return std::nullopt;
  return kib * 1024;
}

std::optional<std::string> parse_pretty_name(std::string_view os_release) {
  for (auto line : split_lines(os_release)) {
    if (!line.starts_with("PRETTY_NAME=")) continue;
    auto value = trim(line.substr(12));
    if (value.size() >= 2 && (value.front() == '"' || value.front() == '\'') && value.back() == value.front())
      value = value.substr(1, value.size() - 2);
    return std::string(value);
  }
  return std::nullopt;
}

HostIdentity probe_identity() {
  HostIdentity host;
  struct utsname names {};
  if (::uname(&names) == 0) {
    host.hostname = names.nodename;
    host.kernel_release = names.release;
    host.machine = names.machine;
  }
  long online = ::sysconf(_SC_NPROCESSORS_ONLN);
  host.cpu_count = online > 0 ? static_cast<unsigned>(online) : 0;
  if (auto meminfo = read_text_file("/proc/meminfo"))
    host.memory_total_bytes = parse_mem_total(*meminfo).value_or(0);
  auto os = read_text_file("/etc/os-release");
  if (!os) os = read_text_file("/usr/lib/os-release");
  if (os) host.os_release = parse_pretty_name(*os).value_or("");
  host.root = ::geteuid() == 0;
  if (auto status = read_text_file("/proc/self/status")) {
    if (auto caps = parse_cap_eff(*status)) {
      host.capabilities_known = true;
      host.cap_net_admin = (*caps >> kCapNetAdmin) & 1u;
      host.cap_sys_admin = (*caps >> kCapSysAdmin) & 1u;
    }
  }
  return host;
}

std::vector<Capability> identity_capabilities(const HostIdentity& host) {
  using S = CapabilityStatus;
  std::vector<Capability> caps;
  auto add = [&](std::string name, bool ok, std::string detail) {
    caps.push_back({std::move(name), "host", ok ? S::kOk : S::kUnknown, std::move(detail), {}});
  };
  add("hostname", !host.hostname.empty(), host.hostname.empty() ? "uname failed" : host.hostname);
  add("kernel", !host.kernel_release.empty(),
      host.kernel_release.empty() ? "uname failed" : fmt::format("{} ({})", host.kernel_release, host.machine));
  // Affinity (taskset, cgroup cpusets) can leave fewer CPUs usable than are online.
  std::string cpus = fmt::format("{} online", host.cpu_count);
  cpu_set_t set;
  CPU_ZERO(&set);
  if (::sched_getaffinity(0, sizeof set, &set) == 0 && static_cast<unsigned>(CPU_COUNT(&set)) != host.cpu_count)
    cpus += fmt::format(", {} usable by this process", CPU_COUNT(&set));
  add("cpus", host.cpu_count > 0, cpus);
  add("memory", host.memory_total_bytes > 0,
      host.memory_total_bytes > 0
          ? fmt::format("{:.1f} GiB", static_cast<double>(host.memory_total_bytes) / (1024.0 * 1024.0 * 1024.0))
          : "no MemTotal in /proc/meminfo");
  add("os", !host.os_release.empty(), host.os_release.empty() ? "no PRETTY_NAME in /etc/os-release" : host.os_release);
  caps.push_back({"root", "host", host.root ? S::kOk : S::kMissing,
                  host.root ? "effective uid 0" : fmt::format("effective uid {}", ::geteuid()), {}});
  auto add_cap = [&](std::string name, std::string_view cap, bool held) {
    if (!host.capabilities_known)
      caps.push_back({std::move(name), "host", S::kUnknown, "no CapEff in /proc/self/status", {}});
    else
      caps.push_back({std::move(name), "host", held ? S::kOk : S::kMissing,
                      fmt::format("{} {} CapEff", cap, held ? "in" : "not in"), {}});
  };
  add_cap("cap_net_admin", "CAP_NET_ADMIN", host.cap_net_admin);
  add_cap("cap_sys_admin", "CAP_SYS_ADMIN", host.cap_sys_admin);
  return caps;
}

}  // namespace chaosbench::harness
