#include "faults/network/network_fault_types.h"

#include <array>
#include <fmt/format.h>

#include "faults/network/impairment_fault.h"
#include "faults/network/partition_fault.h"
#include "faults/network/rate_fault.h"

namespace chaosbench::faults {
namespace {

constexpr ParamSpec kDirection{"direction", ParamKind::kString, false, "egress",
                               "egress (traffic the node sends; a -> b on a link [a, b]), ingress or both"};
constexpr ParamSpec kImpairBackend{"backend", ParamKind::kString, false, "auto",
                                   "auto (netem where the kernel has it, else nfqueue), netem or nfqueue"};
constexpr ParamSpec kCorrelation{"correlation", ParamKind::kPercent, false, "0%",
                                 "how much each packet's draw depends on the previous one's (netem's correlation)"};

constexpr std::array kDelay{
    ParamSpec{"delay", ParamKind::kDuration, true, "", "added to every matching packet, once per direction"},
    ParamSpec{"jitter", ParamKind::kDuration, false, "0ms", "random variation around delay (packet order is kept)"},
    kCorrelation,
    ParamSpec{"distribution", ParamKind::kString, false, "uniform", "jitter distribution: uniform or normal"},
    kDirection, kImpairBackend};
constexpr std::array kLoss{ParamSpec{"percent", ParamKind::kPercent, true, "", "packets dropped"}, kCorrelation,
                           kDirection, kImpairBackend};
constexpr std::array kCorrupt{
    ParamSpec{"percent", ParamKind::kPercent, true, "", "packets with one bit flipped (the receiver's checksum drops them)"},
    kDirection, kImpairBackend};
constexpr std::array kDuplicate{ParamSpec{"percent", ParamKind::kPercent, true, "", "packets sent twice"}, kCorrelation,
                                kDirection, kImpairBackend};
constexpr std::array kReorder{
    ParamSpec{"percent", ParamKind::kPercent, true, "", "packets sent at once, ahead of the others"},
    ParamSpec{"delay", ParamKind::kDuration, false, "10ms", "delay of the packets that are not reordered"}, kCorrelation,
    kDirection, kImpairBackend};
constexpr std::array kRate{
    ParamSpec{"rate", ParamKind::kRate, true, "", "the link's rate: \"100mbit\", \"1gbit\""},
    ParamSpec{"burst", ParamKind::kSize, false, "", "bytes sent at line rate before the limit applies (default: "
                                                    "suits the rate)"},
    kDirection,
    ParamSpec{"backend", ParamKind::kString, false, "auto", "auto or htb (through netlink)"}};
constexpr std::array kPartition{
    ParamSpec{"one_way", ParamKind::kBool, false, "false",
              "cut only what the first side sends (the nodes; the first group; a -> b), not the way back"},
    ParamSpec{"backend", ParamKind::kString, false, "auto", "auto or iptables"}};

// netem and htb are set through netlink (libnl), so the tc tool is not needed; the delay
// line's rules go in with iptables.
constexpr std::string_view kNetemNeeds[] = {"cap_net_admin", "sch_netem", "sch_htb", "cls_u32"};
constexpr std::string_view kNfqueueNeeds[] = {"cap_net_admin", "nfnetlink_queue", "xt_NFQUEUE", "iptables"};
constexpr std::string_view kHtbNeeds[] = {"cap_net_admin", "sch_htb", "cls_u32"};
constexpr std::string_view kIptablesNeeds[] = {"cap_net_admin", "iptables"};
constexpr BackendOption kImpairmentOptions[] = {{"netem", kNetemNeeds}, {"nfqueue", kNfqueueNeeds}};
constexpr BackendOption kDuplicateOptions[] = {{"netem", kNetemNeeds}};
constexpr BackendOption kRateOptions[] = {{"htb", kHtbNeeds}};
constexpr BackendOption kPartitionOptions[] = {{"iptables", kIptablesNeeds}};
constexpr BackendChoice kImpairmentBackends{"", kImpairmentOptions};
constexpr BackendChoice kDuplicateBackends{"", kDuplicateOptions};
constexpr BackendChoice kRateBackends{"", kRateOptions};
constexpr BackendChoice kPartitionBackends{"", kPartitionOptions};

Direction direction_of(const Params& p) { return parse_direction(p.get<std::string>("direction")).value_or(Direction::kEgress); }
double fraction(const Params& p, const char* name) { return p.has(name) ? p.get<Percent>(name).fraction() : 0.0; }

std::unique_ptr<Fault> make_impairment(const Params& p, Impairment imp) {
  return std::make_unique<ImpairmentFault>(imp, direction_of(p), p.get<std::string>("backend"));
}

Impairment impairment_of(std::string_view type, const Params& p) {
  Impairment imp;
  if (type == "network.delay") {
    imp.delay = p.get<Duration>("delay").value;
    imp.jitter = p.get<Duration>("jitter").value;
    imp.delay_correlation = fraction(p, "correlation");
    imp.normal = p.get<std::string>("distribution") == "normal";
  } else if (type == "network.loss") {
    imp.loss = fraction(p, "percent");
    imp.loss_correlation = fraction(p, "correlation");
  } else if (type == "network.corrupt") {
    imp.corrupt = fraction(p, "percent");
  } else if (type == "network.duplicate") {
    imp.duplicate = fraction(p, "percent");
  } else if (type == "network.reorder") {
    imp.reorder = fraction(p, "percent");
    imp.reorder_correlation = fraction(p, "correlation");
    imp.delay = p.get<Duration>("delay").value;
  }
  return imp;
}

std::string check_choice(const Params& p, const char* name, std::initializer_list<std::string_view> allowed) {
  const auto& v = p.get<std::string>(name);
  for (auto a : allowed)
    if (v == a) return "";
  std::string list;
  for (auto a : allowed) list += fmt::format("{}\"{}\"", list.empty() ? "" : ", ", a);
  return fmt::format("{}: \"{}\" is not one of {}", name, v, list);
}

}  // namespace

std::span<const ParamSpec> network_delay_params() { return kDelay; }
std::span<const ParamSpec> network_loss_params() { return kLoss; }
std::span<const ParamSpec> network_rate_params() { return kRate; }
std::span<const ParamSpec> network_partition_params() { return kPartition; }
std::span<const ParamSpec> network_corrupt_params() { return kCorrupt; }
std::span<const ParamSpec> network_duplicate_params() { return kDuplicate; }
std::span<const ParamSpec> network_reorder_params() { return kReorder; }

std::unique_ptr<Fault> make_network_delay(const Params& p) { return make_impairment(p, impairment_of("network.delay", p)); }
std::unique_ptr<Fault> make_network_loss(const Params& p) { return make_impairment(p, impairment_of("network.loss", p)); }
std::unique_ptr<Fault> make_network_corrupt(const Params& p) {
  return make_impairment(p, impairment_of("network.corrupt", p));
}
std::unique_ptr<Fault> make_network_duplicate(const Params& p) {
  return make_impairment(p, impairment_of("network.duplicate", p));
}
std::unique_ptr<Fault> make_network_reorder(const Params& p) {
  return make_impairment(p, impairment_of("network.reorder", p));
}
std::unique_ptr<Fault> make_network_rate(const Params& p) {
  return std::make_unique<RateFault>(p.get<Rate>("rate").bits_per_second, p.has("burst") ? p.get<Size>("burst").bytes : 0,
                                     direction_of(p));
}
std::unique_ptr<Fault> make_network_partition(const Params& p) {
  return std::make_unique<PartitionFault>(p.get<bool>("one_way"));
}

const BackendChoice& impairment_backends() { return kImpairmentBackends; }
const BackendChoice& duplicate_backends() { return kDuplicateBackends; }
const BackendChoice& rate_backends() { return kRateBackends; }
const BackendChoice& partition_backends() { return kPartitionBackends; }

std::string check_impairment(const Params& p) {
  if (auto e = check_choice(p, "direction", {"egress", "ingress", "both"}); !e.empty()) return e;
  if (auto e = check_choice(p, "backend", {"auto", "netem", "nfqueue"}); !e.empty()) return e;
  if (p.has("distribution")) return check_choice(p, "distribution", {"uniform", "normal"});
  return "";
}

std::string check_rate(const Params& p) {
  if (auto e = check_choice(p, "direction", {"egress", "ingress", "both"}); !e.empty()) return e;
  if (p.get<Rate>("rate").bits_per_second < 8000) return "rate: below 8kbit (1000 bytes/s), the smallest rate htb keeps";
  return check_choice(p, "backend", {"auto", "htb"});
}

std::string check_partition(const Params& p) { return check_choice(p, "backend", {"auto", "iptables"}); }

std::string network_backend(std::string_view type, const Params& p, std::string* why) {
  if (type == "network.rate") return "htb";
  if (type == "network.partition") return "iptables";
  return ImpairmentFault::choose_backend(impairment_of(type, p), p.get<std::string>("backend"), why);
}

}  // namespace chaosbench::faults
