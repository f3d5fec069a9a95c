// Who and what this host is: uname, CPUs, memory, Debian release, root and the effective
// capabilities that network faults and namespaces need. The parsers are pure so tests
// can feed them text; probe_identity() reads the real files.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

#include "harness/doctor/host_probe.h"

namespace chaosbench::harness {

inline constexpr int kCapNetAdmin = 12;  // linux/capability.h
inline constexpr int kCapSysAdmin = 21;

// CapEff from /proc/self/status text, as a bit mask.
std::optional<std::uint64_t> parse_cap_eff(std::string_view proc_status);

// MemTotal from /proc/meminfo text, in bytes.
std::optional<std::uint64_t> parse_mem_total(std::string_view meminfo);

// PRETTY_NAME from /etc/os-release text, unquoted.
std::optional<std::string> parse_pretty_name(std::string_view os_release);

HostIdentity probe_identity();

// The "host" group: hostname, kernel, cpus, memory, os, root, cap_net_admin, cap_sys_admin.
std::vector<Capability> identity_capabilities(const HostIdentity& host);

}  // namespace chaosbench::harness
