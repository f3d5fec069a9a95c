#include "harness/cli/model_goodput_options.h"

#include <charconv>
#include <fmt/format.h>

#include "common/values/units.h"
#include "reports/goodput/goodput_run_inputs.h"

namespace chaosbench::harness {
namespace {

using reports::GoodputInputs;
using P = GoodputInputs::Provenance;

// The duration flags and the input each sets.
struct DurationFlag {
  const char* name;
  GoodputInputs::Value GoodputInputs::*member;
  const char* help;
};
constexpr DurationFlag kDurationFlags[] = {
    {"step-time", &GoodputInputs::step_time_s, "fault-free step time"},
    {"checkpoint-interval", &GoodputInputs::checkpoint_interval_s, "work between checkpoints (tau)"},
    {"checkpoint-cost", &GoodputInputs::checkpoint_cost_s, "blocking time per checkpoint save (C)"},
    {"detect", &GoodputInputs::detect_s, "per failure: time to detect it"},
    {"restart", &GoodputInputs::restart_s, "per failure: time to restart the job"},
    {"restore", &GoodputInputs::restore_s, "per failure: time to load the checkpoint"},
    {"recompute", &GoodputInputs::recompute_s, "per failure: work lost in memory mode"},
    {"rejoin", &GoodputInputs::rejoin_s, "per failure: pause to admit the ended ranks back (elastic)"},
};

bool parse_int(const std::string& text, long long& out) {
  const auto* end = text.data() + text.size();
  auto [ptr, ec] = std::from_chars(text.data(), end, out);
  return ec == std::errc() && ptr == end && !text.empty();
}

std::vector<int> parse_nodes(const std::string& text) {
  std::vector<int> out;
  std::size_t start = 0;
  while (start <= text.size()) {
    const auto comma = std::min(text.find(',', start), text.size());
    const std::string item = text.substr(start, comma - start);
    long long n = 0;
    if (!parse_int(item, n)) throw UsageError(fmt::format("--nodes: \"{}\" is not a whole number", item));
    if (n < 1 || n > 1'000'000) throw UsageError(fmt::format("--nodes: {} is outside 1..1,000,000", n));
    out.push_back(static_cast<int>(n));
    start = comma + 1;
  }
  return out;
}

GoodputInputs::Value given(double v, const std::string& flag, const std::string& text) {
  return {v, P::kGiven, fmt::format("--{} {}", flag, text)};
}

void apply_failure_model(const po::variables_map& vm, GoodputInputs& in) {
  if (vm.count("mtbf-node") && vm.count("fleet-mtbf")) throw UsageError("give --mtbf-node or --fleet-mtbf, not both");
  if (vm.count("mtbf-node")) {
    const auto text = vm["mtbf-node"].as<std::string>();
    in.node_mtbf_s = given(flag_seconds("mtbf-node", text), "mtbf-node", text);
  } else if (vm.count("fleet-mtbf")) {
    // Job-level at the run's N (or --at-nodes): per node it is N times longer.
    const auto text = vm["fleet-mtbf"].as<std::string>();
    std::optional<int> at = in.run_nodes;
    if (!at && vm.count("at-nodes")) at = vm["at-nodes"].as<int>();
    if (!at) throw UsageError("--fleet-mtbf is the job's MTBF at the run's N: give a RESULTS.json or --at-nodes");
    if (*at < 1 || *at > 1'000'000) throw UsageError(fmt::format("--at-nodes: {} is outside 1..1,000,000", *at));
    in.node_mtbf_s = {flag_seconds("fleet-mtbf", text) * *at, P::kGiven,
                      fmt::format("--fleet-mtbf {} at N = {} (x {})", text, *at, *at)};
  }
  if (vm.count("weibull-shape")) {
    const double k = vm["weibull-shape"].as<double>();
    in.weibull_shape = {k, P::kGiven, fmt::format("--weibull-shape {:g}", k)};
    in.process = k == 1 ? GoodputInputs::Process::kPoisson : GoodputInputs::Process::kWeibull;
  }
}

void apply_mode(const po::variables_map& vm, GoodputInputs& in) {
  if (!vm.count("mode")) return;
  const auto mode = vm["mode"].as<std::string>();
  if (mode == "checkpoint") in.lost_work = GoodputInputs::LostWork::kCheckpoint;
  else if (mode == "memory") in.lost_work = GoodputInputs::LostWork::kMemory;
  else throw UsageError(fmt::format("--mode: expected checkpoint or memory, not \"{}\"", mode));
  in.lost_work_source = {0, P::kGiven, "--mode " + mode};
  in.unrecoverable.clear();
}

}  // namespace

double flag_seconds(const std::string& flag, const std::string& text) {
  if (text.size() > 1 && text.back() == 'd') {  // days, which common/values/units.h does not know
    const std::string number = text.substr(0, text.size() - 1);
    auto parsed = common::parse_duration(number + "h");
    if (parsed) return parsed->seconds() * 24;
  }
  auto parsed = common::parse_duration(text);
  if (!parsed) throw UsageError(fmt::format("--{}: {} (or days: \"264d\")", flag, parsed.error));
  return parsed->seconds();
}

void add_goodput_flags(po::options_description& options) {
  options.add_options()
      ("mtbf-node", po::value<std::string>(), "per-node MTBF (default: Llama 3's, 264d)")
      ("fleet-mtbf", po::value<std::string>(), "the job's MTBF at the run's N (or --at-nodes) instead")
      ("weibull-shape", po::value<double>(), "Weibull failures with this shape (default: poisson)")
      ("nodes", po::value<std::string>(), "node counts N,N,... (default 1,2,5,...,100000)")
      ("gpus-per-node", po::value<double>(), "GPUs per node, to label rows (default 8)");
  for (const auto& f : kDurationFlags) options.add_options()(f.name, po::value<std::string>(), f.help);
  options.add_options()
      ("mode", po::value<std::string>(), "lost work: checkpoint (restart recovery) or memory (elastic)")
      ("seed", po::value<std::uint64_t>()->default_value(1), "Monte Carlo seed")
      ("trials", po::value<std::size_t>()->default_value(2000), "simulated jobs for the run's prediction interval")
      ("at-nodes", po::value<int>(), "N of the interval chart, also a row (default 1024)")
      ("json", "print the report as JSON")
      ("html", po::value<std::string>(), "write the report as a self-contained HTML page to FILE");
}

GoodputInputs goodput_inputs_from(const po::variables_map& vm, const std::optional<reports::RunResult>& run) {
  GoodputInputs in = reports::assumed_goodput_inputs();
  if (run) reports::read_run_inputs(*run, in);
  for (const auto& f : kDurationFlags) {
    if (!vm.count(f.name)) continue;
    const auto text = vm[f.name].as<std::string>();
    // A given cost also ends the bootstrap over measured failures (reports::use_bootstrap).
    in.*f.member = given(flag_seconds(f.name, text), f.name, text);
  }
  apply_failure_model(vm, in);
  apply_mode(vm, in);
  if (vm.count("nodes")) in.nodes = parse_nodes(vm["nodes"].as<std::string>());
  if (vm.count("gpus-per-node")) {
    const double g = vm["gpus-per-node"].as<double>();
    in.gpus_per_node = {g, P::kGiven, fmt::format("--gpus-per-node {:g}", g)};
  }
  reports::derive_checkpoint_interval(in);
  return in;
}

reports::GoodputModel goodput_model_from(const po::variables_map& vm) {
  reports::GoodputModel m;
  m.seed = vm["seed"].as<std::uint64_t>();
  m.trials = vm["trials"].as<std::size_t>();
  if (m.trials < 1 || m.trials > 10'000'000) throw UsageError("--trials must lie in 1..10,000,000");
  if (vm.count("at-nodes")) {
    const int n = vm["at-nodes"].as<int>();
    if (n < 1 || n > 1'000'000) throw UsageError(fmt::format("--at-nodes: {} is outside 1..1,000,000", n));
    m.chart_nodes = n;
  }
  return m;
}

}  // namespace chaosbench::harness
