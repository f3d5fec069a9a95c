#include "bench/llm/stream/openai_chunk.h"

#include <nlohmann/json.hpp>

#include "common/json/json_limits.h"

namespace chaosbench::bench::llm {
namespace {

using Json = nlohmann::json;

OpenAiChunk malformed(std::string why) {
  OpenAiChunk c;
  c.kind = OpenAiChunk::Kind::kMalformed;
  c.message = std::move(why);
  return c;
}

// A field that is absent, null, or of the type `is_type` tests (then read into
// `out`); false when it has another type.
template <class T>
bool optional_field(const Json &object, const char *key, std::optional<T> &out,
                    bool (Json::*is_type)() const noexcept) {
  const auto it = object.find(key);
  if (it == object.end() || it->is_null()) return true;
  if (!((*it).*is_type)()) return false;
  out = it->template get<T>();
  return true;
}

OpenAiChunk error_chunk(const Json &root) {
  OpenAiChunk c;
  c.kind = OpenAiChunk::Kind::kError;
  const Json *source = &root;
  if (const auto it = root.find("error"); it != root.end() && it->is_object()) source = &*it;
  if (const auto it = source->find("message"); it != source->end() && it->is_string()) {
    c.message = it->get<std::string>();
  } else if (const auto e = root.find("error"); e != root.end() && e->is_string()) {
    c.message = e->get<std::string>();
  } else {
    c.message = "error without a message";
  }
  return c;
}

// choices[0]: its text (or delta.content) and finish_reason.
bool read_choice(const Json &choice, OpenAiEndpoint endpoint, OpenAiChunk &c) {
  if (!choice.is_object()) return false;
  const Json *holder = &choice;
  const char *key = "text";
  if (endpoint == OpenAiEndpoint::kChatCompletions) {
    const auto delta = choice.find("delta");
    if (delta != choice.end() && !delta->is_null() && !delta->is_object()) return false;
    holder = delta == choice.end() || delta->is_null() ? nullptr : &*delta;
    key = "content";
  }
  std::optional<std::string> text;
  if (holder != nullptr && !optional_field(*holder, key, text, &Json::is_string)) return false;
  c.text = text.value_or("");
  return optional_field(choice, "finish_reason", c.finish_reason, &Json::is_string);
}

}  // namespace

OpenAiChunk parse_openai_chunk(std::string_view data, OpenAiEndpoint endpoint, std::string_view event_type) {
  if (data == "[DONE]") {
    OpenAiChunk c;
    c.kind = OpenAiChunk::Kind::kDone;
    return c;
  }
  std::string why;
  const Json root = common::parse_json_bounded(data, &why);
  if (root.is_discarded()) return malformed(why);
  if (!root.is_object()) return malformed("chunk is not a JSON object");
  const auto error = root.find("error");
  const auto object = root.find("object");
  if (event_type == "error" || (error != root.end() && !error->is_null()) ||
      (object != root.end() && *object == "error")) {
    return error_chunk(root);
  }
  OpenAiChunk c;
  c.kind = OpenAiChunk::Kind::kChunk;
  if (const auto choices = root.find("choices"); choices != root.end() && !choices->is_null()) {
    if (!choices->is_array()) return malformed("choices is not an array");
    if (!choices->empty() && !read_choice(choices->front(), endpoint, c)) {
      return malformed("choices[0] has fields of the wrong type");
    }
  }
  if (const auto usage = root.find("usage"); usage != root.end() && !usage->is_null()) {
    if (!usage->is_object() || !optional_field(*usage, "prompt_tokens", c.prompt_tokens, &Json::is_number_unsigned) ||
        !optional_field(*usage, "completion_tokens", c.completion_tokens, &Json::is_number_unsigned)) {
      return malformed("usage has fields of the wrong type");
    }
  }
  return c;
}

}  // namespace chaosbench::bench::llm
