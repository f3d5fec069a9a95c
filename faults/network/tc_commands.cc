#include "faults/network/tc_commands.h"

#include <arpa/inet.h>
#include <fmt/format.h>
#include <limits>

namespace chaosbench::faults {
namespace {

std::string root_handle() { return fmt::format("{:x}:", kShaperRootMajor); }
std::string class_id(int id) { return fmt::format("{:x}:{:x}", kShaperRootMajor, id); }

std::string percent(std::uint32_t raw) {
  return fmt::format("{:.7f}%", raw * 100.0 / std::numeric_limits<std::uint32_t>::max());
}

std::string dotted(std::uint32_t host_order) {
  in_addr addr{htonl(host_order)};
  char buf[INET_ADDRSTRLEN] = {};
  ::inet_ntop(AF_INET, &addr, buf, sizeof buf);
  return buf;
}

void append_match(Argv& cmd, const U32Key& key) {
  if (key.mask == 0xFFFFFFFFu && (key.offset == kIpv4SrcOffset || key.offset == kIpv4DstOffset)) {
    cmd.insert(cmd.end(), {"match", "ip", key.offset == kIpv4SrcOffset ? "src" : "dst", dotted(key.value) + "/32"});
  } else {
    cmd.insert(cmd.end(), {"match", "u32", fmt::format("{:#x}", key.value), fmt::format("{:#x}", key.mask), "at",
                           std::to_string(key.offset)});
  }
}

Argv netem_command(const RulePlan& plan, const std::string& dev) {
  const NetemPlan& n = *plan.netem;
  Argv cmd{"tc", "qdisc", "add", "dev", dev, "parent", class_id(plan.id), "handle", fmt::format("{:x}:", plan.id),
           "netem", "limit", std::to_string(n.limit)};
  if (n.delay_us) {
    cmd.insert(cmd.end(), {"delay", fmt::format("{}us", n.delay_us)});
    if (n.jitter_us) {
      cmd.push_back(fmt::format("{}us", n.jitter_us));
      if (n.delay_correlation) cmd.push_back(percent(n.delay_correlation));
    }
    if (n.normal_distribution) cmd.insert(cmd.end(), {"distribution", "normal"});
  }
  auto probability = [&](const char* name, std::uint32_t p, std::uint32_t correlation) {
    if (!p) return;
    cmd.insert(cmd.end(), {name, percent(p)});
    if (correlation) cmd.push_back(percent(correlation));
  };
  probability("loss", n.loss, n.loss_correlation);
  probability("duplicate", n.duplicate, 0);
  probability("corrupt", n.corrupt, 0);
  probability("reorder", n.reorder, n.reorder_correlation);
  return cmd;
}

}  // namespace

std::vector<Argv> tc_add_commands(const RulePlan& plan, const std::string& dev, bool add_root) {
  std::vector<Argv> out;
  if (add_root) out.push_back({"tc", "qdisc", "add", "dev", dev, "root", "handle", root_handle(), "htb"});
  const std::string rate = fmt::format("{}bit", plan.rate_bytes_per_s * 8);
  const std::string burst = fmt::format("{}b", plan.burst_bytes);
  out.push_back({"tc", "class", "add", "dev", dev, "parent", root_handle(), "classid", class_id(plan.id), "htb", "rate",
                 rate, "ceil", rate, "burst", burst, "cburst", burst, "quantum", std::to_string(plan.quantum_bytes)});
  if (plan.netem) out.push_back(netem_command(plan, dev));
  Argv filter{"tc", "filter", "add", "dev", dev, "parent", root_handle(), "protocol", "ip", "prio",
              std::to_string(plan.prio), "u32"};
  for (const auto& key : plan.keys) append_match(filter, key);
  filter.insert(filter.end(), {"flowid", class_id(plan.id)});
  out.push_back(std::move(filter));
  return out;
}

std::vector<Argv> tc_remove_commands(const RulePlan& plan, const std::string& dev, bool remove_root) {
  if (remove_root) return {{"tc", "qdisc", "del", "dev", dev, "root", "handle", root_handle(), "htb"}};
  return {{"tc", "filter", "del", "dev", dev, "parent", root_handle(), "protocol", "ip", "prio", std::to_string(plan.prio)},
          {"tc", "class", "del", "dev", dev, "classid", class_id(plan.id)}};
}

}  // namespace chaosbench::faults
