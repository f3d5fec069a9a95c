#include "harness/probes/command_probe.h"

#include <fmt/format.h>

#include "common/kernel/netns.h"
#include "harness/probes/probe_support.h"

namespace chaosbench::harness::probes {

std::string last_line(const std::string& text) {
  std::size_t end = text.find_last_not_of("\r\n \t");
  if (end == std::string::npos) return "";
  std::size_t start = text.find_last_of('\n', end);
  start = start == std::string::npos ? 0 : start + 1;
  return printable_excerpt(std::string_view(text).substr(start, end - start + 1), 200);
}

CommandProbe::CommandProbe(ProbeSpec spec, ProbeContext ctx) : spec_(std::move(spec)), ctx_(std::move(ctx)) {}

ProbeOutcome CommandProbe::evaluate(double /*now_wall*/) {
  return guarded([&] {
    std::vector<std::string> argv;
    for (const auto& a : spec_.argv) argv.push_back(expand_node_addresses(a, ctx_));
    if (argv.empty()) return failed("no program to run");
    const auto limit = std::chrono::duration_cast<std::chrono::milliseconds>(spec_.timeout.value);
    const common::CommandOutput out = common::run_in_netns(node_netns(ctx_, spec_.node), argv, limit);
    const std::string err = last_line(out.err);
    const std::string tail = err.empty() ? "" : ": " + err;
    if (out.timed_out)
      return failed(fmt::format("{} did not exit within {} (killed){}", argv[0], common::to_string(spec_.timeout), tail));
    if (out.exit_code < 0) return failed(fmt::format("{} could not start or was killed by a signal{}", argv[0], tail));
    return ProbeOutcome{out.exit_code == 0, out.exit_code, fmt::format("{} exited {}{}", argv[0], out.exit_code, tail)};
  });
}

}  // namespace chaosbench::harness::probes
