#include "bench/llm/load/prompt_file.h"

#include <algorithm>
#include <optional>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "common/json/json_limits.h"
#include "common/files/safe_files.h"

namespace chaosbench::bench::llm {
namespace {

using nlohmann::json;

// A record before its lengths are checked.
struct RawRecord {
  std::string prompt;
  std::optional<std::int64_t> output_len;
};

std::int64_t positive_integer(const json& v, std::size_t line, std::string_view what) {
  if (!v.is_number_integer() || v.get<std::int64_t>() < 1)
    throw PromptFileError(line, fmt::format("{} must be an integer >= 1", what));
  return v.get<std::int64_t>();
}

const std::string& turn_text(const json& turn, std::size_t line, std::size_t index) {
  if (!turn.is_object() || !turn.contains("value") || !turn["value"].is_string())
    throw PromptFileError(line, fmt::format("conversations[{}] needs a string \"value\"", index));
  return turn["value"].get_ref<const std::string&>();
}

std::string turn_speaker(const json& turn) {
  if (!turn.is_object() || !turn.contains("from") || !turn["from"].is_string()) return "";
  return turn["from"].get<std::string>();
}

RawRecord from_conversations(const json& turns, std::size_t line) {
  if (!turns.is_array() || turns.empty()) throw PromptFileError(line, "\"conversations\" must be a non-empty array");
  const std::string first = turn_speaker(turns[0]);
  if (first != "human" && first != "user")
    throw PromptFileError(line, "conversations[0] must be from \"human\" or \"user\"");
  RawRecord r{turn_text(turns[0], line, 0), std::nullopt};
  if (turns.size() > 1) {
    const std::string second = turn_speaker(turns[1]);
    if (second == "gpt" || second == "assistant")
      r.output_len = static_cast<std::int64_t>(turn_text(turns[1], line, 1).size());
  }
  return r;
}

RawRecord parse_record(std::string_view text, std::size_t line) {
  std::string error;
  const json j = common::parse_json_bounded(text, &error);
  if (j.is_discarded()) throw PromptFileError(line, error);
  if (!j.is_object()) throw PromptFileError(line, "expected a JSON object");
  const bool has_prompt = j.contains("prompt"), has_turns = j.contains("conversations");
  if (has_prompt == has_turns) throw PromptFileError(line, "expected exactly one of \"prompt\" and \"conversations\"");
  if (has_turns) return from_conversations(j["conversations"], line);
  if (!j["prompt"].is_string()) throw PromptFileError(line, "\"prompt\" must be a string");
  RawRecord r{j["prompt"].get<std::string>(), std::nullopt};
  if (j.contains("output_len")) r.output_len = positive_integer(j["output_len"], line, "\"output_len\"");
  return r;
}

}  // namespace

namespace {

std::string error_text(std::size_t line, const std::string& message, const std::string& source) {
  std::string text = source.empty() ? "" : source + ": ";
  if (line) text += fmt::format("line {}: ", line);
  return text + message;
}

}  // namespace

PromptFileError::PromptFileError(std::size_t line, const std::string& message, const std::string& source)
    : std::runtime_error(error_text(line, message, source)), line_(line), message_(message) {}

PromptFile parse_prompt_jsonl(std::string_view text, const PromptFileOptions& options) {
  if (text.size() > options.max_file_bytes)
    throw PromptFileError(0, fmt::format("larger than {} bytes", options.max_file_bytes));
  PromptFile out;
  std::size_t line_no = 0;
  while (!text.empty()) {
    ++line_no;
    const std::size_t eol = text.find('\n');
    std::string_view line = text.substr(0, eol);
    text.remove_prefix(eol == std::string_view::npos ? text.size() : eol + 1);
    if (line.size() > options.max_line_bytes)
      throw PromptFileError(line_no, fmt::format("longer than {} bytes", options.max_line_bytes));
    if (line.find_first_not_of(" \t\r") == std::string_view::npos) continue;
    if (out.requests.size() >= options.max_records)
      throw PromptFileError(line_no, fmt::format("more than {} records", options.max_records));
    RawRecord r = parse_record(line, line_no);
    if (r.prompt.empty()) throw PromptFileError(line_no, "the prompt is empty");
    const auto input_len = static_cast<std::int64_t>(r.prompt.size());
    if (input_len > options.max_input_len) {
      if (options.skip_oversize_prompts) {
        ++out.skipped_oversize;
        continue;
      }
      throw PromptFileError(line_no, fmt::format("the prompt has {} tokens, more than {}", input_len, options.max_input_len));
    }
    const std::int64_t output_len = std::clamp<std::int64_t>(r.output_len.value_or(options.default_output_len), 1,
                                                             std::max<std::int64_t>(options.max_output_len, 1));
    out.requests.push_back({std::move(r.prompt), input_len, output_len});
  }
  return out;
}

PromptFile read_prompt_jsonl(const std::string& path, const PromptFileOptions& options) {
  std::string text;
  if (const std::string error = common::read_regular_file(path, text, options.max_file_bytes); !error.empty())
    throw PromptFileError(0, error);
  try {
    return parse_prompt_jsonl(text, options);
  } catch (const PromptFileError& e) {
    throw PromptFileError(e.line(), e.message(), path);
  }
}

}  // namespace chaosbench::bench::llm
