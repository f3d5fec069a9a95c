// Kernel traffic-control and netfilter features, judged from what the host shows without
// loading anything: /proc/modules, registrations under /proc/net and /sys/module, the
// kernel config (/proc/config.gz or /boot/config-R) and /lib/modules/R. Gathering the
// evidence reads files; judging it is pure, so tests can feed made-up evidence.
#pragma once

#include <map>
#include <optional>
#include <set>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "harness/doctor/host_probe.h"

namespace chaosbench::harness {

struct KernelModuleSpec {
  std::string_view module;  // as in /proc/modules: "sch_netem", "xt_NFQUEUE"
  std::string_view config;  // its Kconfig symbol: "CONFIG_NET_SCH_NETEM"
};

// sch_netem, sch_htb, sch_tbf, sch_ingress (ingress and clsact), cls_u32, cls_bpf,
// act_mirred, ifb, veth, bridge, nfnetlink_queue, xt_NFQUEUE, xt_statistic, nft_queue.
std::span<const KernelModuleSpec> kernel_module_specs();

struct KernelEvidence {
  std::optional<std::set<std::string>> loaded;  // /proc/modules; nullopt when absent
  std::map<std::string, std::string> proofs;    // module -> runtime evidence ("/proc/net/... lists NFQUEUE")
  std::optional<std::map<std::string, std::string>> config;  // CONFIG_X -> "y"/"m"; nullopt: none found
  std::string config_source;                    // "/proc/config.gz" or "/boot/config-R"
  std::string lib_modules_dir;                  // "/lib/modules/R"
  bool lib_modules_present = false;
  std::set<std::string> builtin;                // from modules.builtin
  std::map<std::string, std::string> module_files;  // module -> path under lib_modules_dir
};

// CONFIG_X=y / CONFIG_X=m lines; "# CONFIG_X is not set" and other values are left out.
std::map<std::string, std::string> parse_kernel_config(std::string_view text);

// "kernel/net/sched/sch_netem.ko.xz" -> "sch_netem"; dashes become underscores, as the
// kernel names modules. Empty when the path is not a module file.
std::string module_name_from_path(std::string_view path);

KernelEvidence read_kernel_evidence(const std::string& kernel_release);

// ok when loaded, registered, built in or present as a module file; missing when the
// config or /lib/modules rules it out; unknown when there is nothing to tell by.
Capability assess_kernel_module(const KernelModuleSpec& spec, const KernelEvidence& evidence);

// "kernel_config": where the judgements came from (config, /lib/modules, module support).
Capability kernel_sources_capability(const KernelEvidence& evidence);

// kernel_sources_capability followed by one capability per kernel_module_specs() entry.
std::vector<Capability> kernel_capabilities(const KernelEvidence& evidence);

}  // namespace chaosbench::harness
