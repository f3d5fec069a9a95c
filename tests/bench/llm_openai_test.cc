// The OpenAI-compatible request bodies and answers of the built-in LLM server: what is
// accepted, the error object for what is not, and the chunks a streamed answer is made of.
#include <catch2/catch.hpp>

#include <nlohmann/json.hpp>

#include "bench/llm/openai_request.h"
#include "bench/llm/openai_response.h"
#include "bench/llm/stream/openai_stream.h"
#include "bench/llm/stream/sse_parser.h"

namespace llm_openai_test {  // this file's names, apart in a unity batch (tests/CMakeLists.txt)

using namespace chaosbench::bench::llm;
using nlohmann::json;

namespace {

RequestLimits limits() {
  RequestLimits l;
  l.models = {"cb-tiny"};
  l.context_tokens = 64;
  return l;
}

json error_of(const ParsedRequest& p) {
  REQUIRE(p.error);
  return json::parse(p.error->json()).at("error");
}

// The JSON of one "data: {...}\n\n" event.
json event_json(const std::string& event) {
  REQUIRE(event.rfind("data: ", 0) == 0);
  REQUIRE(event.size() > 8);
  REQUIRE(event.substr(event.size() - 2) == "\n\n");
  return json::parse(event.substr(6, event.size() - 8));
}

}  // namespace

TEST_CASE("llm openai: completions and chat bodies parse with their defaults", "[llm-openai]") {
  auto p = parse_request(OpenAiEndpoint::kCompletions, R"({"model":"cb-tiny","prompt":"hello","max_tokens":8,"stream":true,
      "stream_options":{"include_usage":true},"ignore_eos":true,"temperature":0,"seed":7})", limits());
  REQUIRE(p.request);
  CHECK(p.request->prompt == "hello");
  CHECK(p.request->max_tokens == 8);
  CHECK(p.request->stream);
  CHECK(p.request->include_usage);
  CHECK(p.request->ignore_eos);
  CHECK(p.request->temperature == 0);
  CHECK(*p.request->seed == 7);
  CHECK(parse_request(OpenAiEndpoint::kCompletions, R"({"model":"cb-tiny","prompt":["one"]})", limits()).request->max_tokens == 16);

  auto c = parse_request(OpenAiEndpoint::kChatCompletions, R"({"model":"cb-tiny","messages":[{"role":"user","content":"hi"}]})", limits());
  REQUIRE(c.request);
  CHECK(c.request->prompt == "user: hi\nassistant: ");
  CHECK(c.request->max_tokens == 64 - 20);  // what fits in the context
  CHECK_FALSE(c.request->stream);
  c = parse_request(OpenAiEndpoint::kChatCompletions, R"({"model":"cb-tiny","messages":[{"role":"user","content":"hi"}],"max_completion_tokens":5})",
                    limits());
  CHECK(c.request->max_tokens == 5);
}

TEST_CASE("llm openai: bad bodies get the API's error object with the parameter named", "[llm-openai]") {
  auto e = error_of(parse_request(OpenAiEndpoint::kCompletions, "{not json", limits()));
  CHECK(e.at("type") == "invalid_request_error");
  CHECK(e.at("param").is_null());
  e = error_of(parse_request(OpenAiEndpoint::kCompletions, R"({"model":"gpt-9","prompt":"x"})", limits()));
  CHECK(e.at("code") == "model_not_found");
  CHECK(parse_request(OpenAiEndpoint::kCompletions, R"({"model":"gpt-9","prompt":"x"})", limits()).error->status == 404);
  e = error_of(parse_request(OpenAiEndpoint::kCompletions, R"({"model":"cb-tiny","prompt":"x","max_tokens":100})", limits()));
  CHECK(e.at("code") == "context_length_exceeded");
  CHECK(e.at("param") == "prompt");
  CHECK_THAT(e.at("message").get<std::string>(), Catch::Contains("maximum context length is 64 tokens"));
  e = error_of(parse_request(OpenAiEndpoint::kChatCompletions, R"({"model":"cb-tiny","messages":[]})", limits()));
  CHECK(e.at("param") == "messages");
  e = error_of(parse_request(OpenAiEndpoint::kChatCompletions, R"({"model":"cb-tiny","messages":[{"role":"user","content":3}]})", limits()));
  CHECK(e.at("param") == "messages[0].content");
  for (const char* body : {R"({"model":"cb-tiny","prompt":"x","stream":"yes"})", R"({"model":"cb-tiny","prompt":"x","n":2})",
                           R"({"model":"cb-tiny","prompt":"x","temperature":3})", R"({"model":"cb-tiny","prompt":"x","max_tokens":0})",
                           R"({"model":"cb-tiny","prompt":"x","stream_options":{"include_usage":true}})", R"({"model":"cb-tiny"})",
                           R"([1,2])", R"({"model":5,"prompt":"x"})"}) {
    INFO(body);
    auto r = parse_request(OpenAiEndpoint::kCompletions, body, limits());
    CHECK_FALSE(r.request);
    REQUIRE(r.error);
    CHECK(r.error->status == 400);
  }
}

TEST_CASE("llm openai: hostile bodies are refused as values", "[llm-openai]") {
  std::string deep(100000, '[');
  CHECK(parse_request(OpenAiEndpoint::kCompletions, deep, limits()).error->status == 400);
  RequestLimits small = limits();
  small.max_body = 10;
  CHECK(parse_request(OpenAiEndpoint::kCompletions, R"({"model":"cb-tiny","prompt":"x"})", small).error->status == 413);
  // A model name that is not UTF-8 comes back in the message, replaced, without a throw.
  auto e = parse_request(OpenAiEndpoint::kCompletions, "{\"model\":\"\xff\xfe\",\"prompt\":\"x\"}", limits());
  if (e.error) CHECK_NOTHROW(json::parse(e.error->json()));
}

TEST_CASE("llm openai: a streamed chat is role, tokens, finish, usage, DONE", "[llm-openai]") {
  ResponseWriter w(OpenAiEndpoint::kChatCompletions, "cb-tiny", 42, 1700000000);
  auto first = event_json(w.token_event("Hel"));
  CHECK(first.at("object") == "chat.completion.chunk");
  CHECK(first.at("id") == w.id());
  CHECK(first.at("choices")[0].at("delta") == json({{"role", "assistant"}, {"content", "Hel"}}));
  CHECK(first.at("choices")[0].at("finish_reason").is_null());
  auto second = event_json(w.token_event("lo"));
  CHECK(second.at("choices")[0].at("delta") == json({{"content", "lo"}}));
  auto last = event_json(w.finish_event(FinishReason::kLength));
  CHECK(last.at("choices")[0].at("finish_reason") == "length");
  CHECK(last.at("choices")[0].at("delta") == json::object());
  auto usage = event_json(w.usage_event({5, 2}));
  CHECK(usage.at("choices").empty());
  CHECK(usage.at("usage") == json({{"prompt_tokens", 5}, {"completion_tokens", 2}, {"total_tokens", 7}}));
  CHECK(ResponseWriter::done_event() == "data: [DONE]\n\n");
}

TEST_CASE("llm openai: completions chunks carry text, whole answers carry usage", "[llm-openai]") {
  ResponseWriter w(OpenAiEndpoint::kCompletions, "cb-tiny", 1, 1700000000);
  auto c = event_json(w.token_event("a"));
  CHECK(c.at("object") == "text_completion");
  CHECK(c.at("choices")[0].at("text") == "a");
  CHECK(event_json(w.token_event("\xc3")).at("choices")[0].at("text") == "\xef\xbf\xbd");  // half a character
  auto whole = json::parse(w.whole("abc", FinishReason::kStop, {3, 3}));
  CHECK(whole.at("choices")[0].at("text") == "abc");
  CHECK(whole.at("choices")[0].at("finish_reason") == "stop");
  CHECK(whole.at("usage").at("total_tokens") == 6);
  ResponseWriter chat(OpenAiEndpoint::kChatCompletions, "cb-tiny", 2, 1700000000);
  auto answer = json::parse(chat.whole("ok", FinishReason::kStop, {1, 1}));
  CHECK(answer.at("object") == "chat.completion");
  CHECK(answer.at("choices")[0].at("message") == json({{"role", "assistant"}, {"content", "ok"}}));
}

TEST_CASE("llm openai: what the server writes, the client's stream parsing reads back", "[llm-openai]") {
  for (auto endpoint : {OpenAiEndpoint::kCompletions, OpenAiEndpoint::kChatCompletions}) {
    ResponseWriter w(endpoint, "cb-tiny", 9, 1700000000);
    std::string wire;
    for (const char* t : {"The", " quick", " fox"}) wire += w.token_event(t);
    wire += w.finish_event(FinishReason::kStop) + w.usage_event({4, 3}) + ResponseWriter::done_event();
    SseParser sse;
    OpenAiStream stream(endpoint);
    std::string text;
    for (std::size_t i = 0; i < wire.size(); i += 7)  // in pieces, as a socket delivers it
      sse.feed(std::string_view(wire).substr(i, 7), [&](const SseEvent& e) {
        const auto& c = stream.on_event(e);
        if (c.has_text()) text += c.text;
      });
    CHECK(stream.done());
    CHECK(text == "The quick fox");
    CHECK(stream.text_chunks() == 3);
    CHECK(stream.malformed() == 0);
    CHECK(*stream.prompt_tokens() == 4);
    CHECK(*stream.completion_tokens() == 3);
    CHECK(*stream.finish_reason() == "stop");
  }
}

}  // namespace llm_openai_test
