// Traffic control on one interface of one namespace, through netlink (libnl-route),
// never by running `tc`: an htb root the shaper creates and owns, one class per rule with
// an optional netem child, and a u32 filter that steers the rule's packets to its class.
// Unclassified packets take htb's direct queue (no default class), so traffic no rule
// names is untouched.
//
//   root htb 1: (no default)
//     class 1:N  rate R (or "unlimited")  -- child netem N: (delay, jitter, loss, ...)
//     filter u32 prio P: match ip src/dst X  -> flowid 1:N
//
// The shaper touches only what it created: it refuses an interface whose root qdisc is
// someone else's (anything other than the kernel's default), and removes exactly its
// filters, classes and (with the last rule) its root. Same layout as Mininet's TCIntf
// (htb rate class with a netem child). One shaper per
// interface: a second one finds the first one's root and refuses.
//
// Rule ids (class minors) start at 2, so no netem handle N: is the root's 1:. A packet
// that several rules match goes to the most specific (src and dst, then one of them, then
// match-all), among equals to the lower id (tc_plan.h, shaper_filter_prio). Filters match
// IPv4 only; ARP and IPv6 take the direct queue. The exact tc commands for the same change
// are in tc_commands.h.
//
// Threads: use from one thread. Each call blocks for one netlink round trip or a few.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>

namespace chaosbench::faults {

struct NetemSettings {
  std::uint32_t delay_us = 0;
  std::uint32_t jitter_us = 0;
  double delay_correlation = 0;  // 0..1
  bool normal_distribution = false;  // needs the kernel's "normal" table (iproute2 ships it)
  double loss = 0;               // probabilities 0..1, scaled to the kernel's 32-bit fields
  double loss_correlation = 0;
  double duplicate = 0;
  double corrupt = 0;
  double reorder = 0;            // netem needs a delay for reordering
  double reorder_correlation = 0;
  std::uint32_t limit = 100000;  // packets
};

struct ShapeRule {
  std::optional<std::string> match_src;  // IPv4 dotted quad; none: any
  std::optional<std::string> match_dst;
  std::optional<std::uint64_t> rate_bytes_per_s;  // none: unlimited
  std::uint32_t burst_bytes = 0;                  // 0: a burst that suits the rate
  std::optional<NetemSettings> netem;
};

class TcShaper {
 public:
  // Nothing is changed until add(). Throws std::runtime_error when the interface is absent.
  TcShaper(int netns_fd, std::string interface);
  ~TcShaper();  // removes whatever of its own is left (best effort, never throws)
  TcShaper(const TcShaper&) = delete;
  TcShaper& operator=(const TcShaper&) = delete;

  // Puts the rule in effect; returns its id (the class minor). Creates the htb root on
  // first use. Invalid input (tc_plan.h, plan_rule) throws before anything changes.
  // Throws std::runtime_error with the kernel's reason (for example netem missing:
  // "Specified qdisc not found" becomes "the kernel has no sch_netem") and then leaves
  // nothing of this rule behind.
  int add(const ShapeRule& rule);
  // Takes the rule out: its filter, then its class (its netem goes with it); with the last
  // rule, just the root, which takes everything under it in one message. Idempotent: an
  // unknown id, or objects already gone (even the root), is success. Throws
  // std::runtime_error when the kernel refuses; the rule is then still listed.
  void remove(int id);

  const std::string& interface() const;
  // The handle of the root qdisc this shaper created ("1:"), or "" when none is in place:
  // what the journal records so cleanup can remove exactly it.
  std::string root_handle() const;

  // Whether the running kernel can make a netem qdisc: tries one on the loopback device of
  // a throwaway namespace, made by a short-lived thread (needs CAP_SYS_ADMIN); the answer
  // is cached for the process. `why` gets the reason when not.
  static bool netem_available(std::string* why = nullptr);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace chaosbench::faults
