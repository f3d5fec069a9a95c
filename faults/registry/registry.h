// The fault registry: one explicit table of every fault type (no self-registration, which
// linkers drop from static libraries and which has no stable order). `chaosbench faults`
// prints it; the scenario parser reads parameters from it; the runner creates faults
// through it.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string_view>
#include <vector>

#include "faults/backend_choice.h"
#include "faults/fault.h"
#include "faults/param.h"
#include "faults/target.h"

namespace chaosbench::faults {

// What a fault does that the run driver and the launcher must plan for: flags read from
// the registry, so nothing outside it compares type names.
enum FaultTrait : std::uint32_t {
  kNodeGone = 1u << 0,           // ends a node's processes; without restart_after the node stays down
  kOomKills = 1u << 1,           // an OOM kill of a rank is the fault's effect while it is active
  kSilentCorruption = 1u << 2,   // wrong values, no error: only a check such as the replica fingerprint sees it
  kHangs = 1u << 3,              // a call never returns: only a watchdog or a timeout ends it
  kServeReplicaLives = 1u << 4,  // a serve replica lives through it (answers errors, queues): nothing to restart there
};

// One row of the registry, written with designated initialisers
// ({.type = "network.delay", .summary = ..., ...}) in declaration order. The fields without
// a default (type to make) are what every row must say: g++ warns on a row that leaves one
// out (-Wmissing-field-initializers); the rest default to "none" for types that lack them.
struct FaultTypeInfo {
  std::string_view type;         // "marker", "network.delay", ...
  std::string_view summary;      // one line
  std::span<const ParamSpec> params;
  std::uint32_t target_forms;    // TargetForm bits accepted
  bool reversible;
  bool needs_namespaces = false;  // true when it only works on a namespaced cluster
  std::string_view needs_cgroup = "";  // the node cgroup controller it cannot work without, or ""
  const BackendChoice* backends;  // how a host can carry it out, for `chaosbench doctor`; never null
  std::function<std::unique_ptr<Fault>(const Params&)> make;
  // Checks across parameters the declarations cannot express; "" when fine. Run by the
  // scenario parser, so a bad value is a scenario error before anything starts.
  std::function<std::string(const Params&)> check = nullptr;
  // The backend this host will use, or "" with the reason in *why: run fails before
  // anything starts (exit 3) when a fault cannot run here. Null: nothing to check before the
  // run (the fault names its backend when applied, Fault::backend).
  std::function<std::string(const Params&, std::string* why)> host_backend = nullptr;
  // What the workload sees: the error a GPU or collective fault surfaces ("cudaError 214
  // ..."); "" for the others.
  std::string_view surfaces = "";
  // Workload kinds that act the fault out; empty: every kind.
  std::string_view workloads = "";
  std::uint32_t traits = 0;  // FaultTrait bits
  // What `restart_after` does for this type, said as its parameter's description; "" when
  // the type takes none. restart_after is a key of the fault's envelope
  // (harness FaultSpec::restart_after), not one of `params`: the run driver acts on it
  // (starts the ranks the fault ended again), never the fault.
  std::string_view restart_after = "";
};

std::span<const FaultTypeInfo> fault_registry();

// Every row's BackendChoice once, in the order `chaosbench doctor` lists them (marker,
// network, node, GPU): first those this file pins, then any other a row points at, in
// registry order, so a new type with a new choice needs no line but its row.
std::vector<const BackendChoice*> backend_choices();

// nullptr for an unknown type.
const FaultTypeInfo* find_fault_type(std::string_view type);

// The parameters a scenario may give a fault of `info`'s type, in the order listings
// print them: the type's own `params`, then restart_after where the type takes it.
std::vector<ParamSpec> declared_params(const FaultTypeInfo& info);

// Whether `type` is a known fault type with `trait`.
bool fault_has_trait(std::string_view type, FaultTrait trait);

}  // namespace chaosbench::faults
