// Reads a JSONL file of prompts (one JSON object a line) into LlmRequests. Two shapes are
// accepted, per line:
//   {"prompt": "text", "output_len": 128}      output_len optional (an integer >= 1)
//   {"conversations": [{"from": "human", "value": "text"},
//                      {"from": "gpt", "value": "answer"}]}
// The second is a line of the ShareGPT shape vLLM's benchmarks use: the first turn (from
// "human" or "user") is the prompt and, when the second turn is from "gpt" or
// "assistant", its byte length is the output length (vLLM takes the answer's token count
// the same way); otherwise the default. The ShareGPT release itself is one JSON array, not
// JSONL: convert it first (`jq -c '.[]' in.json > out.jsonl`). Token counts are bytes
// (the byte-level tokenizer, token_dataset.h). Blank lines are skipped. Everything is
// bounded (file size, line length, record count, JSON nesting), and every error names its
// line.
#pragma once

#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "bench/llm/load/token_dataset.h"

namespace chaosbench::bench::llm {

// A prompt file that cannot be used. what() reads "<source>: line <n>: <message>", each
// part present when known; `line()` is 1-based, 0 for the file as a whole.
class PromptFileError : public std::runtime_error {
 public:
  PromptFileError(std::size_t line, const std::string& message, const std::string& source = "");
  std::size_t line() const { return line_; }
  const std::string& message() const { return message_; }

 private:
  std::size_t line_;
  std::string message_;
};

struct PromptFileOptions {
  std::size_t max_file_bytes = std::size_t{512} << 20;
  std::size_t max_line_bytes = std::size_t{4} << 20;
  std::size_t max_records = 1'000'000;
  std::int64_t default_output_len = 128;  // when a line gives none
  std::int64_t max_output_len = 4096;     // longer output lengths are clamped to it
  std::int64_t max_input_len = 1 << 20;   // longer prompts: an error, or skipped
  bool skip_oversize_prompts = false;     // ShareGPT has some very long ones
};

struct PromptFile {
  std::vector<LlmRequest> requests;  // in file order
  std::size_t skipped_oversize = 0;
};

// Throws PromptFileError. `text` is the file's content.
PromptFile parse_prompt_jsonl(std::string_view text, const PromptFileOptions& options = {});
// Reads `path` (a regular file, at most max_file_bytes), then parse_prompt_jsonl. Throws
// PromptFileError (line 0 for a file that cannot be read), naming the path.
PromptFile read_prompt_jsonl(const std::string& path, const PromptFileOptions& options = {});

}  // namespace chaosbench::bench::llm
