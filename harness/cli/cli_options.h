// Options every subcommand shares (--help, --verbose, --quiet) and the parsing boilerplate
// around Boost.Program_options, so each command file holds only its own options.
#pragma once

#include <boost/program_options.hpp>
#include <string>

#include "harness/cli/commands.h"

namespace chaosbench::harness {

namespace po = boost::program_options;

struct CommandLine {
  po::variables_map vm;
  bool help = false;
};

// Adds --help/-h, --verbose/-v and --quiet/-q to `options`, parses `args` (positional
// arguments per `positional`), sets the log level, and throws UsageError on bad usage.
CommandLine parse_command_line(const Args& args, po::options_description& options,
                               const po::positional_options_description& positional);

// "Usage: chaosbench NAME ...\n\nsummary\n\n<options>"
void print_help(const std::string& usage, const std::string& summary, const po::options_description& options);

// A --tolerance value, a percentage: "10", "10%", "0.5%" -> 0.10, 0.10, 0.005. A
// UsageError for anything else or outside [0, 1000]%.
double parse_tolerance(std::string text);

}  // namespace chaosbench::harness
