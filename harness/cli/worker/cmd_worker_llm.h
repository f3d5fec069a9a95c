// chaosbench worker llm-serve: the built-in OpenAI-compatible LLM server (CPU transformer or synthetic engine).
#pragma once

#include "harness/cli/commands.h"

namespace chaosbench::harness {

int worker_llm_serve(const Args& args);

}  // namespace chaosbench::harness
