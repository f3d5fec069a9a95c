// The two OpenAI-compatible endpoints chaosbench serves and drives: POST /v1/completions
// (prompt in, choices[].text out) and POST /v1/chat/completions (messages in,
// choices[].delta / message out).
#pragma once

namespace chaosbench::bench::llm {

enum class OpenAiEndpoint { kCompletions, kChatCompletions };

}  // namespace chaosbench::bench::llm
