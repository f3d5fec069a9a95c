// One function per subcommand. Each receives the arguments after the subcommand name,
// parses them with Boost.Program_options, and returns an exit code (exit_code.h).
// Usage errors are thrown as UsageError and turned into exit 2 by cli_main.
#pragma once

#include <stdexcept>
#include <string>
#include <vector>

namespace chaosbench::harness {

class UsageError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

using Args = std::vector<std::string>;

int cmd_run(const Args& args);
int cmd_validate(const Args& args);
int cmd_faults(const Args& args);
int cmd_metrics(const Args& args);
int cmd_doctor(const Args& args);
int cmd_report(const Args& args);
int cmd_cleanup(const Args& args);
int cmd_stop(const Args& args);
int cmd_bench(const Args& args);
int cmd_version(const Args& args);
int cmd_worker(const Args& args);
int cmd_agent(const Args& args);
int cmd_compare(const Args& args);
int cmd_history(const Args& args);
int cmd_model(const Args& args);
int cmd_diagnose(const Args& args);

}  // namespace chaosbench::harness
