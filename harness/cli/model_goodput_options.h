// `chaosbench model goodput`'s flags: their declarations and how they turn into the
// model's inputs (reports/goodput/goodput_inputs.h) over what a results.json measured or what is
// assumed, each marked "given". cmd_model.cc runs the command.
#pragma once

#include <optional>
#include <string>

#include "harness/cli/cli_options.h"
#include "reports/goodput/goodput_inputs.h"
#include "reports/goodput/goodput_model.h"
#include "reports/model/run_model.h"

namespace chaosbench::harness {

void add_goodput_flags(po::options_description& options);

// The inputs: assumed, then the run's (when given), then the flags. Throws UsageError
// for a flag that does not parse or contradicts another, std::invalid_argument for a run
// that is no training job.
reports::GoodputInputs goodput_inputs_from(const po::variables_map& vm, const std::optional<reports::RunResult>& run);

// The model's settings: --seed, --trials, --at-nodes.
reports::GoodputModel goodput_model_from(const po::variables_map& vm);

// A duration flag's value: "30s", "5min", "3.1h" (common/values/units.h) or days, "264d".
// Throws UsageError naming the flag.
double flag_seconds(const std::string& flag, const std::string& text);

}  // namespace chaosbench::harness
