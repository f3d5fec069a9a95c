// chaosbench history add|gate|show DIR: the pieces its three subcommands share
// (cmd_history.cc holds `add` and the dispatch, cmd_history_gate.cc and
// cmd_history_show.cc the others). docs/history.md describes the command.
#pragma once

#include <optional>
#include <string>

#include "harness/cli/commands.h"
#include "reports/model/run_model.h"

namespace chaosbench::harness {

int history_gate(const Args& args);
int history_show(const Args& args);

// A results file, or nullopt with the reason on stderr naming the file.
std::optional<reports::RunResult> load_history_results(const std::string& file);

// Prints "chaosbench history: <line>" on stderr for each note.
void print_history_notes(const std::vector<std::string>& notes);

// The label as a store shows it: "unlabelled" for none.
std::string testbed_label(const std::string& testbed);

}  // namespace chaosbench::harness
