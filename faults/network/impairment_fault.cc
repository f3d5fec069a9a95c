#include "faults/network/impairment_fault.h"

#include <fmt/format.h>
#include <cmath>
#include <map>
#include <stdexcept>

namespace chaosbench::faults {

ImpairmentFault::ImpairmentFault(Impairment imp, Direction direction, std::string requested_backend)
    : imp_(imp), direction_(direction), requested_(std::move(requested_backend)) {}

std::string ImpairmentFault::choose_backend(const Impairment& imp, const std::string& requested, std::string* why) {
  std::string netem_why;
  const bool netem = (requested == "auto" || requested == "netem") && NetworkPlane::netem_available(&netem_why);
  if (netem) return "netem";
  if (requested == "netem") {
    if (why) *why = fmt::format("backend netem asked for, but {}", netem_why);
    return "";
  }
  const std::string cannot = delay_line_cannot(imp);
  if (!cannot.empty()) {
    if (why) *why = requested == "auto" ? fmt::format("{}, and {}", cannot, netem_why) : cannot;
    return "";
  }
  return "nfqueue";
}

void ImpairmentFault::do_apply(const ResolvedTarget& target) {
  plane_ = target.network;
  if (!plane_) throw FaultError("network faults need the cluster in network namespaces (root; see chaosbench doctor)");
  std::string why;
  backend_ = choose_backend(imp_, requested_, &why);
  if (backend_.empty()) throw FaultError(why);
  const auto flows = target_flows(target, direction_);
  if (flows.empty()) throw FaultError("the target names no traffic between two nodes");
  // A failure halfway is rolled back by Fault::apply: do_revert takes out what shapes_,
  // lines_ and chains_ hold.
  if (plane_->host_mode()) return apply_on_host(flows);
  if (backend_ == "netem") {
    // On the receiver's bridge port: the packet then enters the receiver's namespace
    // after its delay, so even the receiver's arrival timestamps (ping's RTT) see it.
    for (const auto& f : by_receiver(flows, plane_->nodes())) {
      ShapeRule rule;
      if (f.sender != kAnyNode) rule.match_src = plane_->node(f.sender).address;
      rule.netem = to_netem(imp_);
      shapes_.push_back(plane_->add_shape(plane_->bridge_netns_fd(), plane_->node(f.receiver).bridge_port, rule, log()));
    }
    return;
  }
  // One delay line in the bridge namespace, fed by the FORWARD hook: it holds packets
  // after they left the sender's namespace (the sender's TCP stack is not throttled by
  // them) and before they enter the receiver's (whose timestamps then see the delay).
  const std::uint16_t queue = plane_->next_queue();
  lines_.push_back(std::make_unique<DelayLine>(plane_->bridge_netns_fd(), queue,
                                               to_delay_line(imp_, plane_->seed() ^ (queue * 0x9E3779B97F4A7C15ull))));
  std::vector<std::string> rules;
  for (const auto& f : flows)
    rules.push_back(fmt::format("{} -j NFQUEUE --queue-num {} --queue-bypass", plane_->match(f.sender, f.receiver), queue));
  chains_.push_back(plane_->add_bridge_chain(rules, log()));
}

void ImpairmentFault::apply_on_host(const std::vector<Flow>& flows) {
  // Every host of the job applies the same fault; each places one side of every flow it
  // is an end of, so a packet meets one rule, and traffic with other addresses none. An
  // empty share places nothing.
  const int local = plane_->local_node();
  if (backend_ == "netem") {
    // On this host's egress, one rule per peer it sends to.
    for (const auto& f : host_share(flows, local, plane_->nodes())) {
      ShapeRule rule;
      rule.netem = to_netem(imp_);
      shapes_.push_back(plane_->add_host_shape(f.receiver, rule, log()));
    }
    return;
  }
  // The delay line on this host's INPUT hook, for what it receives from each job peer:
  // the receiving side, as on the bridge. Held on the sender's OUTPUT instead, the
  // packets would count against the sending socket and throttle TCP (2 Mbit/s measured
  // at 20 ms, against 1.3 Gbit/s here).
  const auto share = host_receive_share(flows, local, plane_->nodes());
  if (share.empty()) return;
  const std::uint16_t queue = start_host_delay_line();
  std::vector<std::string> rules;
  for (const auto& f : share)
    rules.push_back(fmt::format("-i {} {} -j NFQUEUE --queue-num {} --queue-bypass", plane_->node_interface(),
                                plane_->match(f.sender, f.receiver), queue));
  chains_.push_back(plane_->add_host_input_chain(rules, log()));
}

std::uint16_t ImpairmentFault::start_host_delay_line() {
  const int local = plane_->local_node();
  // The host's namespace is shared with whatever else runs there, which may serve the
  // queue number this plane hands out next: a few more are tried.
  constexpr int kQueueTries = 8;
  std::string last;
  for (int attempt = 0; attempt < kQueueTries; ++attempt) {
    const std::uint16_t queue = plane_->next_queue();
    // Every host has the job's seed and the same queue numbers: the host's index keeps
    // its draws (which packets are lost) from mirroring its peers'.
    const std::uint64_t seed = plane_->seed() ^ (queue * 0x9E3779B97F4A7C15ull) ^
                               (static_cast<std::uint64_t>(local + 1) * 0xBF58476D1CE4E5B9ull);
    try {
      lines_.push_back(std::make_unique<DelayLine>(plane_->node(local).netns_fd, queue, to_delay_line(imp_, seed)));
      return queue;
    } catch (const std::invalid_argument&) {
      throw;  // the settings, not the queue number
    } catch (const std::runtime_error& e) {
      last = e.what();
    }
  }
  throw FaultError(fmt::format("{} ({} queue numbers tried)", last, kQueueTries));
}

DelayLineStats ImpairmentFault::delay_line_stats() const {
  if (lines_.empty()) return last_stats_;
  DelayLineStats sum;
  double held_weight = 0;
  for (const auto& l : lines_) {
    auto s = l->stats();
    sum.packets += s.packets;
    sum.released += s.released;
    sum.dropped += s.dropped;
    sum.corrupted += s.corrupted;
    sum.reordered += s.reordered;
    sum.overflows += s.overflows;
    const double w = static_cast<double>(s.released);
    sum.held_mean_us += s.held_mean_us * w;
    sum.held_error_mean_us += s.held_error_mean_us * w;
    held_weight += w;
  }
  if (held_weight > 0) {
    sum.held_mean_us /= held_weight;
    sum.held_error_mean_us /= held_weight;
  }
  return sum;
}

std::map<std::string, double> ImpairmentFault::effect() const {
  if (backend_ != "nfqueue") return {};
  const auto s = delay_line_stats();
  std::map<std::string, double> out{{"packets", static_cast<double>(s.packets)},
                                    {"released", static_cast<double>(s.released)},
                                    {"dropped", static_cast<double>(s.dropped)},
                                    {"corrupted", static_cast<double>(s.corrupted)},
                                    {"reordered", static_cast<double>(s.reordered)},
                                    {"overflows", static_cast<double>(s.overflows)}};
  const double asked_us = std::chrono::duration<double, std::micro>(imp_.delay).count();
  if (asked_us > 0 && s.released > 0 && imp_.reorder == 0) {
    out["held_mean_us"] = s.held_mean_us;
    out["asked_us"] = asked_us;
    out["effect_error_pct"] = std::abs(s.held_mean_us - asked_us) / asked_us * 100.0;
  }
  return out;
}

void ImpairmentFault::do_revert() {
  // Rules first, so no new packet is queued; then the delay lines release what they hold.
  std::string errors;
  try {
    undo_all(chains_, [&](auto& c) { plane_->remove_chain(c); });
  } catch (const FaultError& e) {
    errors = e.what();
  }
  if (!lines_.empty()) last_stats_ = delay_line_stats();
  lines_.clear();
  try {
    undo_all(shapes_, [&](const auto& s) { plane_->remove_shape(s); });
  } catch (const FaultError& e) {
    errors += (errors.empty() ? "" : "; ") + std::string(e.what());
  }
  if (!errors.empty()) throw FaultError(errors);
}

}  // namespace chaosbench::faults
