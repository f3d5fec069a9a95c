#include "harness/doctor/fault_backends.h"

#include <algorithm>
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <string_view>

#include "faults/registry/registry.h"

namespace chaosbench::harness {
namespace {

using S = CapabilityStatus;

// One line of the doctor's backend list: a fault type, or a family of types sharing one
// BackendChoice, with that choice's options.
struct FamilyRule {
  std::string fault;
  const faults::BackendChoice* choice;
};

// The registry's backend choices in their listing order, each under its family name or
// once per fault type using it (faults/registry/registry.h, faults/backend_choice.h).
const std::vector<FamilyRule>& family_rules() {
  static const std::vector<FamilyRule> rules = [] {
    std::vector<FamilyRule> r;
    for (const auto* choice : faults::backend_choices()) {
      if (!choice->family.empty()) {
        r.push_back({std::string(choice->family), choice});
        continue;
      }
      for (const auto& info : faults::fault_registry())
        if (info.backends == choice) r.push_back({std::string(info.type), choice});
    }
    return r;
  }();
  return rules;
}

struct ClusterNeed {
  std::string_view capability;
  bool soft;  // unknown is accepted (said in the detail); only missing rules it out
};

constexpr ClusterNeed kClusterNeeds[] = {
    // The cluster is built through netlink (libnl), so the ip tool is not needed.
    {"cap_net_admin", false}, {"cap_sys_admin", false}, {"netns", false}, {"netns.unshare", false},
    {"veth", true},           {"bridge", true},
};

CapabilityStatus status_of(const std::vector<Capability>& caps, std::string_view name) {
  for (const auto& c : caps)
    if (c.name == name) return c.status;
  return S::kUnknown;
}

std::vector<std::string> unmet(const std::vector<Capability>& caps, const faults::BackendOption& option) {
  std::vector<std::string> out;
  for (auto need : option.needs)
    if (auto s = status_of(caps, need); s != S::kOk) out.push_back(fmt::format("{} {}", need, to_string(s)));
  return out;
}

// ["network.delay", "network.loss", "node.pause"] -> "network.delay/loss, node.pause"
std::string compress_names(const std::vector<std::string_view>& names) {
  std::string out;
  std::string_view prefix;
  for (auto name : names) {
    auto dot = name.rfind('.');
    auto this_prefix = dot == std::string_view::npos ? std::string_view{} : name.substr(0, dot + 1);
    if (!out.empty() && !prefix.empty() && this_prefix == prefix) {
      out += fmt::format("/{}", name.substr(dot + 1));
      continue;
    }
    if (!out.empty()) out += ", ";
    out += name;
    prefix = this_prefix;
  }
  return out;
}

// Notes for capabilities whose absence changes no backend choice but still matters.
std::string_view fixed_note(std::string_view name) {
  struct Note {
    std::string_view name, note;
  };
  static constexpr Note kNotes[] = {
      {"root", "privileges come from capabilities alone (cap_net_admin, cap_sys_admin)"},
      {"kernel_config", "features that are not loaded are judged from /lib/modules, or unknown"},
      {"sch_ingress", "faults shape outgoing traffic only (incoming needs clsact + ifb + act_mirred)"},
      {"ifb", "faults shape outgoing traffic only (incoming needs clsact + ifb + act_mirred)"},
      {"act_mirred", "faults shape outgoing traffic only (incoming needs clsact + ifb + act_mirred)"},
      {"cls_u32", "link targets cannot filter by peer: faults apply to a node's whole interface"},
      {"cls_bpf", "no eBPF classifier; u32 filters are used"},
      {"xt_statistic", "iptables rules cannot sample packets at random"},
      {"nft_queue", "nft's native queue is unavailable; the iptables NFQUEUE target (nft-compat) is used"},
      {"cgroup.pids", "a node's processes are tracked by pid only, not by a pids cgroup"},
      {"ping", "integration tests cannot ping to check that a network fault took effect"},
      {"iperf3", "integration tests cannot measure throughput under a fault with iperf3"},
  };
  for (const auto& n : kNotes)
    if (n.name == name) return n.note;
  return {};
}

}  // namespace

std::vector<FaultBackend> derive_fault_backends(const std::vector<Capability>& caps) {
  std::vector<FaultBackend> out;
  for (const auto& rule : family_rules()) {
    const auto options = rule.choice->options;
    FaultBackend fb{rule.fault, {}, {}};
    std::size_t first_usable = options.size();
    for (std::size_t i = 0; i < options.size(); ++i)
      if (unmet(caps, options[i]).empty()) {
        fb.usable.emplace_back(options[i].backend);
        first_usable = std::min(first_usable, i);
      }
    std::vector<std::string> why;
    for (std::size_t i = 0; i < options.size(); ++i) {
      const auto& option = options[i];
      auto missing = unmet(caps, option);
      // Unusable fallbacks below a usable choice do not matter here; additions always do.
      if (missing.empty() || (i > first_usable && !option.addition)) continue;
      why.push_back(fmt::format("{}: {}", option.backend, fmt::join(missing, ", ")));
    }
    fb.detail = fmt::format("{}", fmt::join(why, "; "));
    out.push_back(std::move(fb));
  }
  return out;
}

ClusterChoice derive_cluster(const std::vector<Capability>& caps) {
  std::vector<std::string> blocking, unverified;
  for (const auto& need : kClusterNeeds) {
    auto s = status_of(caps, need.capability);
    if (s == S::kOk) continue;
    if (need.soft && s == S::kUnknown)
      unverified.emplace_back(need.capability);
    else
      blocking.push_back(fmt::format("{} {}", need.capability, to_string(s)));
  }
  if (!blocking.empty())
    return {"local processes", fmt::format("no namespaced cluster: {}", fmt::join(blocking, ", "))};
  std::string detail = "CAP_NET_ADMIN + CAP_SYS_ADMIN, unshare(CLONE_NEWNET) works; built with libnl";
  if (!unverified.empty()) detail += fmt::format("; {} not verified", fmt::join(unverified, ", "));
  return {"network namespaces", detail};
}

void explain_impacts(HostReport& report) {
  const auto& rules = family_rules();
  for (auto& cap : report.capabilities) {
    if (cap.status == S::kOk) continue;
    // effect text -> the families it applies to, in first-seen order
    std::vector<std::pair<std::string, std::vector<std::string_view>>> effects;
    auto add_effect = [&](std::string effect, std::string_view fault) {
      auto it = std::find_if(effects.begin(), effects.end(), [&](const auto& e) { return e.first == effect; });
      if (it != effects.end()) {
        it->second.push_back(fault);
        return;
      }
      effects.emplace_back(std::move(effect), std::vector<std::string_view>{fault});
    };
    for (const auto& rule : rules) {
      auto derived = std::find_if(report.backends.begin(), report.backends.end(),
                                  [&](const auto& b) { return b.fault == rule.fault; });
      if (derived == report.backends.end()) continue;
      const auto options = rule.choice->options;
      for (std::size_t i = 0; i < options.size(); ++i) {
        const auto& option = options[i];
        if (std::find(option.needs.begin(), option.needs.end(), cap.name) == option.needs.end()) continue;
        if (derived->usable.empty()) {
          add_effect("{} cannot be injected", rule.fault);
        } else if (option.addition) {
          add_effect(fmt::format("{{}} has no {} backend", option.backend), rule.fault);
        } else {
          auto chosen = std::find_if(options.begin(), options.end(),
                                     [&](const auto& o) { return o.backend == derived->usable.front(); });
          if (static_cast<std::size_t>(chosen - options.begin()) > i)
            add_effect(fmt::format("{{}} will use the {} backend", derived->usable.front()), rule.fault);
          else
            add_effect(fmt::format("no {} fallback for {{}}", option.backend), rule.fault);
        }
        break;
      }
    }
    std::vector<std::string> parts;
    for (const auto& [effect, faults] : effects)
      parts.push_back(fmt::format(fmt::runtime(effect), compress_names(faults)));
    for (const auto& need : kClusterNeeds) {
      if (need.capability != cap.name) continue;
      if (report.cluster_mode == "local processes")
        parts.emplace_back("the cluster runs as local processes, not in network namespaces");
      else if (need.soft)
        parts.push_back(fmt::format("the namespaced cluster assumes {} works", cap.name));
    }
    if (auto note = fixed_note(cap.name); !note.empty()) parts.emplace_back(note);
    cap.impact = fmt::format("{}", fmt::join(parts, "; "));
  }
}

}  // namespace chaosbench::harness
