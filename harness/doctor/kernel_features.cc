#include "harness/doctor/kernel_features.h"

#include <algorithm>
#include <array>
#include <filesystem>
#include <fmt/format.h>

#include "harness/doctor/probe_files.h"

namespace chaosbench::harness {
namespace {

constexpr std::array<KernelModuleSpec, 14> kModules{{
    {"sch_netem", "CONFIG_NET_SCH_NETEM"},
    {"sch_htb", "CONFIG_NET_SCH_HTB"},
    {"sch_tbf", "CONFIG_NET_SCH_TBF"},
    {"sch_ingress", "CONFIG_NET_SCH_INGRESS"},  // provides both ingress and clsact
    {"cls_u32", "CONFIG_NET_CLS_U32"},
    {"cls_bpf", "CONFIG_NET_CLS_BPF"},
    {"act_mirred", "CONFIG_NET_ACT_MIRRED"},
    {"ifb", "CONFIG_IFB"},
    {"veth", "CONFIG_VETH"},
    {"bridge", "CONFIG_BRIDGE"},
    {"nfnetlink_queue", "CONFIG_NETFILTER_NETLINK_QUEUE"},
    {"xt_NFQUEUE", "CONFIG_NETFILTER_XT_TARGET_NFQUEUE"},
    {"xt_statistic", "CONFIG_NETFILTER_XT_MATCH_STATISTIC"},
    {"nft_queue", "CONFIG_NFT_QUEUE"},
}};

// Module files live under kernel/net (qdiscs, classifiers, netfilter) and
// kernel/drivers/net (ifb, veth); walking just these two stays fast.
constexpr std::array<std::string_view, 2> kModuleDirs{"kernel/net", "kernel/drivers/net"};

bool file_lists_line(const std::string& path, std::string_view wanted) {
  auto text = read_text_file(path);
  if (!text) return false;
  for (auto line : split_lines(*text))
    if (trim(line) == wanted) return true;
  return false;
}

// What the running kernel shows it has registered, whatever its config says: these exist
// only while the feature is loaded or built in.
void add_runtime_proofs(KernelEvidence& ev) {
  if (path_exists("/proc/net/netfilter/nfnetlink_queue"))
    ev.proofs["nfnetlink_queue"] = "registered (/proc/net/netfilter/nfnetlink_queue exists)";
  for (auto table : {"/proc/net/ip_tables_targets", "/proc/net/ip6_tables_targets"})
    if (!ev.proofs.count("xt_NFQUEUE") && file_lists_line(table, "NFQUEUE"))
      ev.proofs["xt_NFQUEUE"] = fmt::format("registered ({} lists NFQUEUE)", table);
  for (auto table : {"/proc/net/ip_tables_matches", "/proc/net/ip6_tables_matches"})
    if (!ev.proofs.count("xt_statistic") && file_lists_line(table, "statistic"))
      ev.proofs["xt_statistic"] = fmt::format("registered ({} lists statistic)", table);
  for (const auto& spec : kModules) {
    std::string name(spec.module);
    if (!ev.proofs.count(name) && path_exists("/sys/module/" + name))
      ev.proofs[name] = fmt::format("present in /sys/module/{}", name);
  }
}

}  // namespace

std::span<const KernelModuleSpec> kernel_module_specs() { return kModules; }

std::map<std::string, std::string> parse_kernel_config(std::string_view text) {
  std::map<std::string, std::string> config;
  for (auto line : split_lines(text)) {
    line = trim(line);
    if (!line.starts_with("CONFIG_")) continue;
    auto eq = line.find('=');
    if (eq == std::string_view::npos) continue;
    auto value = line.substr(eq + 1);
    if (value == "y" || value == "m") config.emplace(std::string(line.substr(0, eq)), std::string(value));
  }
  return config;
}

std::string module_name_from_path(std::string_view path) {
  auto slash = path.rfind('/');
  auto base = slash == std::string_view::npos ? path : path.substr(slash + 1);
  // "name.ko" or "name.ko.<compression>" (xz, zst, gz)
  auto ko = base.find(".ko");
  if (ko == std::string_view::npos || ko == 0) return {};
  auto rest = base.substr(ko + 3);
  if (!rest.empty() && rest.front() != '.') return {};
  std::string name(base.substr(0, ko));
  std::replace(name.begin(), name.end(), '-', '_');
  return name;
}

KernelEvidence read_kernel_evidence(const std::string& kernel_release) {
  KernelEvidence ev;
  if (auto modules = read_text_file("/proc/modules")) {
    ev.loaded.emplace();
    for (auto line : split_lines(*modules)) {
      auto name = std::string(line.substr(0, line.find(' ')));
      if (!name.empty()) ev.loaded->insert(name);
    }
  }
  add_runtime_proofs(ev);

  if (auto gz = read_gzip_file("/proc/config.gz")) {
    ev.config = parse_kernel_config(*gz);
    ev.config_source = "/proc/config.gz";
  } else if (auto plain = read_text_file("/boot/config-" + kernel_release)) {
    ev.config = parse_kernel_config(*plain);
    ev.config_source = "/boot/config-" + kernel_release;
  }

  ev.lib_modules_dir = "/lib/modules/" + kernel_release;
  std::error_code ec;
  ev.lib_modules_present = !kernel_release.empty() && std::filesystem::is_directory(ev.lib_modules_dir, ec);
  if (!ev.lib_modules_present) return ev;
  if (auto builtin = read_text_file(ev.lib_modules_dir + "/modules.builtin"))
    for (auto line : split_lines(*builtin))
      if (auto name = module_name_from_path(trim(line)); !name.empty()) ev.builtin.insert(name);
  for (auto dir : kModuleDirs) {
    std::filesystem::path root = std::filesystem::path(ev.lib_modules_dir) / dir;
    // Symlinked module trees (some distributions) are followed; unreadable parts are skipped.
    std::filesystem::recursive_directory_iterator it(
        root, std::filesystem::directory_options::follow_directory_symlink |
                  std::filesystem::directory_options::skip_permission_denied, ec);
    for (; !ec && it != std::filesystem::recursive_directory_iterator(); it.increment(ec)) {
      auto name = module_name_from_path(it->path().filename().string());
      if (!name.empty() && !ev.module_files.count(name))
        ev.module_files[name] = std::filesystem::relative(it->path(), ev.lib_modules_dir, ec).string();
    }
    ec.clear();
  }
  return ev;
}

Capability assess_kernel_module(const KernelModuleSpec& spec, const KernelEvidence& ev) {
  using S = CapabilityStatus;
  std::string name(spec.module);
  auto result = [&](S status, std::string detail) { return Capability{name, "kernel", status, std::move(detail), {}}; };
  if (ev.loaded && ev.loaded->count(name)) return result(S::kOk, "loaded (/proc/modules)");
  // The config is the clearest word on built-ins; a runtime registration outranks the rest
  // of it (an out-of-tree module can be there while the config says "not set").
  std::optional<std::string> config_value;
  if (ev.config)
    if (auto it = ev.config->find(std::string(spec.config)); it != ev.config->end()) config_value = it->second;
  if (config_value == "y") return result(S::kOk, fmt::format("built in ({}=y, {})", spec.config, ev.config_source));
  if (auto proof = ev.proofs.find(name); proof != ev.proofs.end()) return result(S::kOk, proof->second);
  auto file = ev.module_files.find(name);
  if (ev.config) {
    if (!config_value)
      return result(S::kMissing, fmt::format("{} is not set ({})", spec.config, ev.config_source));
    if (file != ev.module_files.end()) return result(S::kOk, fmt::format("module ({}=m, {})", spec.config, file->second));
    if (ev.lib_modules_present)
      return result(S::kMissing, fmt::format("{}=m but no module file under {}", spec.config, ev.lib_modules_dir));
    // In a container the kernel loads modules from the host's /lib/modules, unseen here.
    return result(S::kUnknown, fmt::format("{}=m, not loaded, and {} is absent", spec.config, ev.lib_modules_dir));
  }
  if (ev.lib_modules_present) {
    if (ev.builtin.count(name)) return result(S::kOk, "built in (modules.builtin)");
    if (file != ev.module_files.end()) return result(S::kOk, fmt::format("module file {}", file->second));
    return result(S::kMissing, fmt::format("not loaded, not built in, no module file under {}", ev.lib_modules_dir));
  }
  return result(S::kUnknown, fmt::format("not loaded; no kernel config and no {} to tell by", ev.lib_modules_dir));
}

Capability kernel_sources_capability(const KernelEvidence& ev) {
  using S = CapabilityStatus;
  std::string modules;
  if (ev.config && !ev.config->count("CONFIG_MODULES"))
    modules = "loadable modules not supported (CONFIG_MODULES is not set)";
  else if (!ev.loaded)
    modules = "no /proc/modules";
  else
    modules = fmt::format("{} modules loaded", ev.loaded->size());
  std::string lib = ev.lib_modules_present ? ev.lib_modules_dir : fmt::format("no {}", ev.lib_modules_dir);
  if (ev.config) return {"kernel_config", "kernel", S::kOk, fmt::format("{}; {}; {}", ev.config_source, lib, modules), {}};
  if (ev.lib_modules_present)
    return {"kernel_config", "kernel", S::kMissing,
            fmt::format("no /proc/config.gz or /boot/config-R; judged from {}; {}", lib, modules), {}};
  return {"kernel_config", "kernel", S::kMissing,
          fmt::format("no /proc/config.gz or /boot/config-R, {}: only loaded or registered features are known; {}",
                      lib, modules),
          {}};
}

std::vector<Capability> kernel_capabilities(const KernelEvidence& ev) {
  std::vector<Capability> caps{kernel_sources_capability(ev)};
  for (const auto& spec : kModules) caps.push_back(assess_kernel_module(spec, ev));
  return caps;
}

}  // namespace chaosbench::harness
