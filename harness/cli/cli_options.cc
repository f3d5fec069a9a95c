#include "harness/cli/cli_options.h"

#include <cmath>
#include <fmt/format.h>
#include <iostream>
#include <spdlog/spdlog.h>

namespace chaosbench::harness {

CommandLine parse_command_line(const Args& args, po::options_description& options,
                               const po::positional_options_description& positional) {
  options.add_options()
      ("help,h", "show this help")
      ("verbose,v", "log more (debug level)")
      ("quiet,q", "log only warnings and errors");
  CommandLine cl;
  try {
    po::store(po::command_line_parser(args).options(options).positional(positional).run(), cl.vm);
    po::notify(cl.vm);
  } catch (const po::error& e) {
    throw UsageError(e.what());
  }
  cl.help = cl.vm.count("help") > 0;
  if (cl.vm.count("verbose") && cl.vm.count("quiet")) throw UsageError("--verbose and --quiet exclude each other");
  if (cl.vm.count("verbose")) spdlog::set_level(spdlog::level::debug);
  if (cl.vm.count("quiet")) spdlog::set_level(spdlog::level::warn);
  return cl;
}

void print_help(const std::string& usage, const std::string& summary, const po::options_description& options) {
  std::cout << "Usage: " << usage << "\n\n" << summary << "\n\n" << options << "\n";
}

double parse_tolerance(std::string text) {
  if (!text.empty() && text.back() == '%') text.pop_back();
  std::size_t used = 0;
  double x = 0;
  try {
    x = std::stod(text, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (text.empty() || used != text.size() || !std::isfinite(x) || x < 0 || x > 1000)
    throw UsageError(fmt::format("--tolerance: \"{}\" is not a percentage (e.g. 5 or 5%)", text));
  return x / 100.0;
}

}  // namespace chaosbench::harness
