// chaosbench validate SCENARIO.json... — schema and semantic checks with precise errors.
#include <fmt/format.h>
#include <algorithm>
#include <iostream>
#include <map>
#include <optional>
#include <nlohmann/json.hpp>

#include "faults/registry/registry.h"
#include "harness/cli/cli_options.h"
#include "harness/core/exit_code.h"
#include "harness/scenario/json_reader.h"
#include "harness/scenario/scenario_loader.h"

namespace chaosbench::harness {
namespace {

// --accepted-keys: the objects the parser read from one scenario file, in reading order,
// each with the keys it accepts there (an object read again keeps its place and takes
// the newer keys). An inventory file's hosts are a document of their own and left out.
class AcceptedKeysOfFile : public KeyObserver {
 public:
  explicit AcceptedKeysOfFile(std::string file) : file_(std::move(file)) {}

  void object_read(const std::string& file, const std::string& path,
                   const std::vector<std::string_view>& keys) override {
    if (file != file_) return;
    auto [it, added] = index_.emplace(path, objects_.size());
    if (added) objects_.emplace_back(path, std::vector<std::string>());
    objects_[it->second].second.assign(keys.begin(), keys.end());
  }

  // One JSON line per object: {"file": ..., "path": "faults[0].arrivals", "keys": [...]}.
  void print(std::ostream& out) const {
    for (const auto& [path, keys] : objects_)
      out << nlohmann::ordered_json{{"file", file_}, {"path", path}, {"keys", keys}}.dump() << "\n";
  }

 private:
  std::string file_;
  std::vector<std::pair<std::string, std::vector<std::string>>> objects_;
  std::map<std::string, std::size_t> index_;
};

// Takes the hidden flag --accepted-keys off `args` (it is left out of --help: a tool for
// the schema's test, documented in docs/scenario-format.md); true when it was there.
bool take_accepted_keys_flag(Args& args) {
  auto it = std::remove(args.begin(), args.end(), std::string("--accepted-keys"));
  const bool found = it != args.end();
  args.erase(it, args.end());
  return found;
}

// Says which backend each fault will use on this host; false when one cannot run here
// (run would exit 3 before starting anything).
bool host_can_run(const std::string& file, const Scenario& scenario, bool quiet) {
  bool ok = true;
  for (std::size_t i = 0; i < scenario.faults.size(); ++i) {
    const auto& f = scenario.faults[i];
    const auto* info = faults::find_fault_type(f.type);
    if (!info || !info->host_backend) continue;
    std::string why;
    std::string backend = info->host_backend(f.params, &why);
    if (backend.empty()) {
      std::cerr << fmt::format("{}: faults[{}] ({}, {}): cannot run on this host: {}\n", file, i, f.name, f.type, why);
      ok = false;
    } else if (!quiet) {
      std::cout << fmt::format("  faults[{}] {} ({}): backend {} on this host\n", i, f.name, f.type, backend);
    }
  }
  return ok;
}

}  // namespace

int cmd_validate(const Args& given) {
  Args args = given;
  const bool accepted_keys = take_accepted_keys_flag(args);
  po::options_description options("Options");
  options.add_options()
      ("scenario", po::value<std::vector<std::string>>()->multitoken(), "scenario files")
      ("set", po::value<std::vector<std::string>>()->composing(), "KEY=VALUE override, as for run (repeatable)")
      ("portable", "check the file only, not whether this host can run its faults");
  po::positional_options_description positional;
  positional.add("scenario", -1);
  auto cl = parse_command_line(args, options, positional);
  if (cl.help) {
    print_help("chaosbench validate SCENARIO.json... [--set KEY=VALUE]... [--portable]",
               "Checks each scenario file against the format (docs/scenario-format.md) and its semantics:\n"
               "every error names the file, line:column, the JSON path and what was expected.\n"
               "Then, unless --portable, whether this host can run each fault, and with which backend.\n"
               "Exit 0 when every file is valid, 2 otherwise, 3 when a valid file cannot run on this host.",
               options);
    return kExitPass;
  }
  if (!cl.vm.count("scenario")) throw UsageError("no scenario file given");
  LoadOptions load;
  if (cl.vm.count("set")) load.overrides = cl.vm["set"].as<std::vector<std::string>>();
  int rc = kExitPass;
  // With --accepted-keys, stdout carries only the objects' JSON lines.
  bool quiet = cl.vm.count("quiet") > 0 || accepted_keys;
  for (const auto& file : cl.vm["scenario"].as<std::vector<std::string>>()) {
    AcceptedKeysOfFile objects(file);
    try {
      std::optional<ScopedKeyObserver> observing;
      if (accepted_keys) observing.emplace(objects);
      auto result = load_scenario(file, load);
      observing.reset();
      for (const auto& w : result.warnings) std::cerr << format_diagnostic(w) << "\n";
      if (!quiet) std::cout << fmt::format("{}: ok ({})\n", file, result.scenario.name);
      if (!cl.vm.count("portable") && !host_can_run(file, result.scenario, quiet)) rc = std::max<int>(rc, kExitHost);
    } catch (const ScenarioError& e) {
      for (const auto& d : e.diagnostics()) std::cerr << format_diagnostic(d) << "\n";
      rc = kExitUsage;
    }
    if (accepted_keys) objects.print(std::cout);
  }
  return rc;
}

}  // namespace chaosbench::harness
