// chaosbench worker llm-load: the LLM load generator against OpenAI-compatible endpoints.
#pragma once

#include "harness/cli/commands.h"

namespace chaosbench::harness {

int worker_llm_load(const Args& args);

}  // namespace chaosbench::harness
