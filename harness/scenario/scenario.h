// The scenario model: a scenario file as plain, validated, typed values. A Scenario never
// holds a live resource; the runner turns it into processes and applied faults.
// docs/scenario-format.md is the user-facing description of every field here.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include "bench/protocol/record.h"
#include "faults/param.h"
#include "faults/target.h"
#include "faults/units.h"

namespace chaosbench::harness {

using faults::Duration;
using faults::Percent;
using faults::Rate;
using faults::Size;

struct LinkSpec {
  std::optional<Rate> rate;
  std::optional<Duration> delay;
};

enum class ClusterMode {
  kAuto,        // network namespaces where the host can make them, else local processes
  kNamespaces,  // network namespaces or exit 3
  kLocal,       // local processes on loopback
};

struct ClusterSpec {
  int nodes = 1;
  int ranks_per_node = 1;
  ClusterMode mode = ClusterMode::kAuto;
  LinkSpec link;
  int world_size() const { return nodes * ranks_per_node; }
  int node_of_rank(int rank) const { return rank / ranks_per_node; }
};

struct CollectiveWorkload {
  std::string backend = "gloo";
  std::vector<std::string> collectives{"allreduce"};
  std::vector<std::string> algorithms{"ring"};
  Size min_size{1024};
  Size max_size{16u << 20};
  std::uint64_t factor = 2;
  int warmup_iters = 5;
  int iters = 20;
  Duration duration{};  // zero: the sweep once; else repeated until this long has passed
  bool check = true;
  Duration timeout{std::chrono::seconds(30)};
};

struct CommandWorkload {
  std::vector<std::string> argv;
  std::vector<int> nodes;  // empty: every node
  std::map<std::string, std::string> env;
  std::string cwd;
  std::optional<int> master_port;
};

using WorkloadSpec = std::variant<CollectiveWorkload, CommandWorkload>;
std::string_view workload_kind(const WorkloadSpec& w);  // "collective", "command"

struct TargetSpec {
  faults::TargetForm form = faults::TargetForm::kAll;
  std::vector<int> indices;  // nodes or ranks
  int count = 0;             // random
  Percent percent;           // percent
  std::vector<std::pair<int, int>> links;
  std::vector<std::vector<int>> groups;
};

struct RepeatSpec {
  Duration every;
  int count = 1;
};

struct FaultSpec {
  std::string name;
  std::string type;
  TargetSpec target;
  std::optional<Duration> at;
  std::optional<std::int64_t> at_step;
  std::optional<Duration> duration;
  std::optional<RepeatSpec> repeat;
  faults::Params params;
};

struct CheckSpec {
  std::string metric;
  bench::Labels labels;
  std::string phase = "overall";
  std::string stat = "value";
  std::optional<double> min;
  std::optional<double> max;
};

struct Scenario {
  int schema_version = 1;
  std::string name;
  std::string description;
  std::uint64_t seed = 42;
  Duration timeout{std::chrono::minutes(10)};
  ClusterSpec cluster;
  WorkloadSpec workload;
  std::vector<FaultSpec> faults;
  std::vector<CheckSpec> checks;

  std::string source_path;    // the file as named on the command line
  std::string resolved_json;  // the document after --set overrides, for results.json
};

}  // namespace chaosbench::harness
