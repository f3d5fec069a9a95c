// network.delay, network.loss, network.corrupt, network.duplicate and network.reorder:
// one fault class, an Impairment applied to the target's flows on the receiving side.
//   netem:   a rule on the receiver's bridge port (egress toward the receiver), matching
//            the sender's address, with a netem child (TcShaper, libnl);
//   nfqueue: an iptables chain on the bridge namespace's FORWARD hook sending the flows'
//            packets to an NFQUEUE served by one DelayLine thread of the harness.
// Both act between the two namespaces: the sender's TCP stack is not throttled by its own
// packets held in a queue, and the receiver (its timestamps too) sees the delay.
// Backend "auto" takes netem where the kernel has it and falls through to nfqueue without
// error; "netem" or "nfqueue" insists (and apply fails with the reason where it can't).
// On a host of a job (NetworkPlane::host_mode) there is no bridge, and the backend is
// chosen the same way:
//   netem:   on the host's egress, one rule per job peer it sends to (host_share); a
//            packet waits in the sender's egress queue instead of between namespaces;
//   nfqueue: a chain of ours in the host's mangle table, jumped to from INPUT, one rule
//            per job peer it receives from (-i interface -s peer -d host:
//            host_receive_share), and one DelayLine in the host's namespace; the
//            receiving side, as on the bridge.
// Either way each flow is placed by one host, so a packet is impaired once and a round
// trip gains what it gains on the bridge. (ping's own RTT, which ends at the kernel's
// receive timestamp, misses a reply the delay line holds on the pinging host's INPUT.)
#pragma once

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "faults/fault.h"
#include "faults/network/impairment.h"
#include "faults/network/network_plane.h"
#include "faults/network/traffic_flows.h"

namespace chaosbench::faults {

class ImpairmentFault : public Fault {
 public:
  ImpairmentFault(Impairment imp, Direction direction, std::string requested_backend);
  std::string backend() const override { return backend_; }

  // The backend this host would use for `imp` asked as `requested` ("auto", "netem",
  // "nfqueue"), or "" with the reason in `why`.
  static std::string choose_backend(const Impairment& imp, const std::string& requested, std::string* why);

  // The delay lines' own measurements, summed over receivers (nfqueue only).
  DelayLineStats delay_line_stats() const;
  // nfqueue: the delay lines' counters and, for a delay, effect_error_pct = |mean time
  // held - delay asked| / delay asked x 100 (the harness's side of fault/effect_error;
  // ping in the tests is the outside check).
  std::map<std::string, double> effect() const override;

 private:
  void do_apply(const ResolvedTarget& target) override;
  void do_revert() override;
  void apply_on_host(const std::vector<Flow>& flows);
  // Starts a DelayLine in the host's namespace (lines_) on a queue number free there.
  std::uint16_t start_host_delay_line();

  Impairment imp_;
  Direction direction_;
  std::string requested_, backend_;
  NetworkPlane* plane_ = nullptr;
  std::vector<NetworkPlane::ShapeHandle> shapes_;
  std::vector<NetworkPlane::ChainHandle> chains_;
  std::vector<std::unique_ptr<DelayLine>> lines_;
  DelayLineStats last_stats_;
};

}  // namespace chaosbench::faults
