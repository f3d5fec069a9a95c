// Registry glue for the network faults: each type's parameters, maker, cross-parameter
// check and host backend choice. The registry table (faults/registry/registry.cc) lists them.
//
// Parameters every network fault shares: direction ("egress" | "ingress" | "both"; on a
// link [a, b], egress is a -> b) and backend ("auto" or one named backend).
#pragma once

#include <memory>
#include <span>
#include <string>

#include "faults/backend_choice.h"
#include "faults/fault.h"
#include "faults/param.h"

namespace chaosbench::faults {

std::span<const ParamSpec> network_delay_params();
std::span<const ParamSpec> network_loss_params();
std::span<const ParamSpec> network_rate_params();
std::span<const ParamSpec> network_partition_params();
std::span<const ParamSpec> network_corrupt_params();
std::span<const ParamSpec> network_duplicate_params();
std::span<const ParamSpec> network_reorder_params();

std::unique_ptr<Fault> make_network_delay(const Params& p);
std::unique_ptr<Fault> make_network_loss(const Params& p);
std::unique_ptr<Fault> make_network_rate(const Params& p);
std::unique_ptr<Fault> make_network_partition(const Params& p);
std::unique_ptr<Fault> make_network_corrupt(const Params& p);
std::unique_ptr<Fault> make_network_duplicate(const Params& p);
std::unique_ptr<Fault> make_network_reorder(const Params& p);

// Scenario checks (host-independent): direction and backend names, distribution.
std::string check_impairment(const Params& p);
std::string check_rate(const Params& p);
std::string check_partition(const Params& p);

// How each network type can run on a host (the doctor's view; every backend needs
// CAP_NET_ADMIN): delay, loss, corrupt and reorder netem, else the nfqueue delay line;
// duplicate netem only (the delay line cannot duplicate); rate htb; partition iptables.
const BackendChoice& impairment_backends();
const BackendChoice& duplicate_backends();
const BackendChoice& rate_backends();
const BackendChoice& partition_backends();

// The backend this host will use for a fault of `type` with `p`, or "" with the reason.
std::string network_backend(std::string_view type, const Params& p, std::string* why);

}  // namespace chaosbench::faults
