// The chaosbench command line: subcommand dispatch, global options, exit codes.
#pragma once

namespace chaosbench::harness {

// Runs the command line and returns the process exit code (see exit_code.h). Never
// throws; every error is printed with its context.
int cli_main(int argc, char** argv);

}  // namespace chaosbench::harness
