// The scenario parser's sections, one file each (workload_parser.cc, fault_parser.cc,
// check_parser.cc, scrape_parser.cc); scenario_loader.cc drives them. Internal to harness/scenario.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "harness/scenario/json_reader.h"
#include "harness/scenario/scenario.h"

namespace chaosbench::harness {

// Each reports into ctx and returns what it could read (defaults where it could not).
// `scenario_file` places a relative inventory path (cluster.hosts as a string).
ClusterSpec parse_cluster(ParseContext& ctx, const json* value, const std::string& scenario_file);
WorkloadSpec parse_workload(ParseContext& ctx, const json& value, const ClusterSpec& cluster);
TrainWorkload parse_train(ParseContext& ctx, const json& value, const ClusterSpec& cluster);
ServeWorkload parse_serve(ParseContext& ctx, const json& value, const ClusterSpec& cluster);
LlmWorkload parse_llm(ParseContext& ctx, const json& value, const ClusterSpec& cluster);
// llm_load_parser.cc: the llm workload's "load" block.
void parse_llm_load(ParseContext& ctx, const json& value, const ClusterSpec& cluster, LlmLoadSpec& load);
// parallel_parser.cc: hybrid parallelism (workload.parallel of the train workload).
// Reads the block into w.parallel (dp stays 0 unless given: the worker derives it).
void parse_parallel(ParseContext& ctx, const json& value, TrainWorkload& w);
// Why `w`'s device cannot run its hybrid layout, or "".
std::string hybrid_device_refusal(const TrainWorkload& w);
// The block against the cluster, model and batch (bench::train::parallel_error), and the
// settings a hybrid layout refuses (elastic recovery, the replica check).
void check_parallel(ParseContext& ctx, const TrainWorkload& w, const ClusterSpec& cluster);
// Why a fault of `type` cannot run with `workload`'s hybrid layout, or "".
std::string parallel_fault_refusal(std::string_view type, const WorkloadSpec* workload);
// The target forms that name parallel groups: "pp_stage", "tp_group", "dp_replica".
const std::vector<std::string_view>& group_target_forms();
struct GroupTargetContext {
  const ClusterSpec& cluster;
  const WorkloadSpec* workload;                    // null: the scenario has none
  std::uint32_t accepted;                          // the fault type's TargetForm bits
  std::vector<std::string_view> accepted_names;    // the same, as names, for messages
  std::string_view type;                           // the fault type, for messages
};
// A group target (`form` one of group_target_forms()) resolved into ranks (the "ranks"
// form, where the type takes it) or the nodes that hold them (with a warning when those
// nodes hold other ranks too).
std::optional<TargetSpec> parse_group_target(ParseContext& ctx, std::string_view form, const json& value,
                                             const std::string& path, const GroupTargetContext& c);
// workload.recovery; "elastic" only where the workload can carry on without a rank.
RecoverySpec parse_recovery(ParseContext& ctx, const json& value, const ClusterSpec& cluster, bool elastic_allowed);
// `workload` resolves the targets that name its parallel groups (pp_stage, tp_group,
// dp_replica); null when the scenario has none (then such targets say nothing more).
std::vector<FaultSpec> parse_faults(ParseContext& ctx, const json& value, const ClusterSpec& cluster,
                                    const WorkloadSpec* workload);
// fault_trigger_parser.cc: a fault's trigger keys (at, at_step, after + delay, duration,
// repeat, arrivals, probability, exclusive) into `spec`; then, once every fault is read,
// the names that `after` gives and the chains' cycles.
void parse_trigger(ParseContext& ctx, ObjectReader& r, const std::string& path, FaultSpec& spec);
void check_fault_chains(ParseContext& ctx, const std::vector<FaultSpec>& faults);
std::vector<CheckSpec> parse_checks(ParseContext& ctx, const json& value);
// scrape: Prometheus/OpenMetrics endpoints read during the run (scrape_parser.cc).
std::vector<ScrapeSpec> parse_scrapes(ParseContext& ctx, const json& value, const ClusterSpec& cluster);
// mesh: false, or the link mesh's settings (mesh_parser.cc).
MeshSpec parse_mesh(ParseContext& ctx, const json& value);
// probes (probe_parser.cc): `during:NAME` modes name one of `faults`.
std::vector<ProbeSpec> parse_probes(ParseContext& ctx, const json& value, const ClusterSpec& cluster,
                                    const std::vector<FaultSpec>& faults);
// abort: `when` names probes of `probes`.
AbortSpec parse_abort(ParseContext& ctx, const json& value, const std::vector<ProbeSpec>& probes);

// Pieces the sections share.
// A limit written as a number, or as a quantity string in a unit convertible to the
// metric's `unit` ("30s" for a metric in s is 30); "" takes plain numbers only.
std::optional<double> read_limit(ParseContext& ctx, const json& v, const std::string& path, std::string_view unit);
// An object of label values (strings and numbers), as samples carry them.
bench::Labels read_labels(ParseContext& ctx, const json& v, const std::string& path);
// A warning, with the nearest catalogue name, for a metric name outside the catalogue.
void warn_uncatalogued_metric(ParseContext& ctx, const std::string& path, const std::string& name);
// A non-empty array of strings whose first is not empty (a program and its arguments);
// `placeholder_problem` says what is wrong with one argument's placeholders, if anything.
std::vector<std::string> read_argv(ParseContext& ctx, const json& v, const std::string& path,
                                   const std::function<std::optional<std::string>(std::string_view)>& placeholder_problem);

// A scenario's (or an inventory's) JSON text as a document, or a ScenarioError at the
// line and column where it stops being one (too large, too deep, a syntax error).
json parse_document(std::string_view text, const std::string& file);

// Scenario and fault names: 1 to 64 of a-z 0-9 . _ -, starting with a letter or digit
// (they become directory names and phase names).
bool valid_name(const std::string& s);

// Node indices in [0, nodes): an array of distinct integers.
std::optional<std::vector<int>> read_index_list(ParseContext& ctx, const json& v, const std::string& path,
                                                int limit, std::string_view what, bool allow_empty = false);

}  // namespace chaosbench::harness
