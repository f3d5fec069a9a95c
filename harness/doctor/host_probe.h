// `chaosbench doctor`'s model: what this host can inject, as plain values (no live
// objects). probe_host() only reads the system — its one action, a forked child that
// unshares a network namespace and exits, leaves nothing behind — and cmd_doctor prints it.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace chaosbench::harness {

enum class CapabilityStatus { kOk, kMissing, kUnknown };

// "ok", "missing", "unknown"
std::string_view to_string(CapabilityStatus status);

struct Capability {
  std::string name;    // unique across the report: "sch_netem", "cgroup.freezer", "iptables"
  std::string group;   // "host", "namespaces", "kernel", "cgroups", "tools", "gpu", "transport"
  CapabilityStatus status = CapabilityStatus::kUnknown;
  std::string detail;  // one line: the evidence, or why it could not be told
  std::string impact;  // when not ok: what it changes ("network.delay will use the nfqueue backend")
};

struct HostIdentity {
  std::string hostname;
  std::string kernel_release;
  std::string machine;            // uname -m
  unsigned cpu_count = 0;         // online CPUs
  std::uint64_t memory_total_bytes = 0;
  std::string os_release;         // PRETTY_NAME from /etc/os-release; empty when unreadable
  bool root = false;              // effective uid 0
  bool capabilities_known = false;  // CapEff could be read from /proc/self/status
  bool cap_net_admin = false;
  bool cap_sys_admin = false;
};

// The backends a fault family can use on this host, most preferred first. Empty `usable`
// means the family cannot be injected here; `detail` then says what is missing.
struct FaultBackend {
  std::string fault;                // "network.delay", "gpu.*"
  std::vector<std::string> usable;  // "netem", "nfqueue", ...
  std::string detail;               // why a preferred backend is not usable; empty when all are
};

struct HostReport {
  HostIdentity host;
  std::vector<Capability> capabilities;  // grouped, in print order
  std::vector<FaultBackend> backends;
  std::string cluster_mode;              // "network namespaces" or "local processes"
  std::string cluster_detail;
  std::chrono::microseconds probe_duration{0};

  // nullptr when no capability has that name.
  const Capability* find(std::string_view name) const;
};

// Probes this host. Fast (well under a second), needs no network, changes nothing;
// never throws for a missing or unreadable source — that becomes "unknown".
HostReport probe_host();

}  // namespace chaosbench::harness
