// bench/llm/sse_parser and the OpenAI stream conventions on top (openai_chunk,
// openai_stream): the WHATWG event stream rules, every byte split of a
// realistic chunked OpenAI stream through the whole client-side pipeline,
// hostile input.
#include <catch2/catch.hpp>
#include <random>
#include <string>
#include <vector>

#include "bench/http/http_response_reader.h"
#include "bench/llm/stream/openai_stream.h"
#include "bench/llm/stream/sse_parser.h"

namespace llm_sse_test {  // this file's names, apart in a unity batch (tests/CMakeLists.txt)

namespace {

using namespace chaosbench::bench::llm;
using chaosbench::bench::http::HttpResponseReader;
using Kind = OpenAiChunk::Kind;
using namespace std::string_literals;

std::vector<SseEvent> events_of(const std::string &input, std::size_t piece = 0, SseParser *parser = nullptr) {
  SseParser own;
  SseParser &p = parser ? *parser : own;
  std::vector<SseEvent> out;
  const std::size_t step = piece == 0 ? std::max<std::size_t>(input.size(), 1) : piece;
  for (std::size_t at = 0; at < input.size(); at += step)
    p.feed(std::string_view(input).substr(at, step), [&](const SseEvent &e) { out.push_back(e); });
  return out;
}

SseEvent ev(std::string data, std::string type = "message", std::string id = "") {
  return SseEvent{std::move(type), std::move(data), std::move(id)};
}

// A vLLM-like chat stream: role-only delta, text deltas (one with a multi-byte
// UTF-8 character), a comment, the finish reason, a usage-only chunk, then
// [DONE].
const std::string kChatSse =
    ": keep-alive\r\n\r\n"
    "data: "
    "{\"id\":\"c1\",\"choices\":[{\"index\":0,\"delta\":{\"role\":"
    "\"assistant\",\"content\":null}}]}\r\n\r\n"
    "data: "
    "{\"id\":\"c1\",\"choices\":[{\"index\":0,\"delta\":{\"content\":\"Hel\"},"
    "\"finish_reason\":null}]}\n\n"
    "data: "
    "{\"id\":\"c1\",\"choices\":[{\"index\":0,\"delta\":{\"content\":\"lo "
    "\\u00e9\xC3\xA9\"}}]}\r\r"
    "data: "
    "{\"id\":\"c1\",\"choices\":[{\"index\":0,\"delta\":{\"content\":\"!\"},"
    "\"finish_reason\":\"stop\"}]}\n\n"
    "data: "
    "{\"id\":\"c1\",\"choices\":[],\"usage\":{\"prompt_tokens\":7,\"completion_"
    "tokens\":3,\"total_tokens\":10}}\r\n"
    "\r\n"
    "data: [DONE]\n\n";

// kChatSse in chunked transfer coding, chunk boundaries cutting through lines.
std::string chunked_response(const std::string &sse) {
  std::string out =
      "HTTP/1.1 200 OK\r\nContent-Type: "
      "text/event-stream\r\nTransfer-Encoding: chunked\r\n\r\n";
  std::size_t at = 0, size = 1;
  char hex[32];
  while (at < sse.size()) {
    const std::size_t n = std::min(size, sse.size() - at);
    std::snprintf(hex, sizeof hex, size % 2 ? "%zx" : "%zX;ext=1", n);
    out += hex;
    out += "\r\n" + sse.substr(at, n) + "\r\n";
    at += n;
    size = size * 3 % 97 + 1;
  }
  return out + "0\r\n\r\n";
}

struct Summary {
  std::vector<std::string> texts;
  OpenAiStream stream{OpenAiEndpoint::kChatCompletions};
  HttpResponseReader::State http;
};

// Bytes off the socket, in the given pieces, through the whole client-side
// pipeline.
Summary run_pipeline(const std::string &wire, const std::vector<std::size_t> &pieces) {
  Summary s;
  HttpResponseReader http;
  SseParser sse;
  std::size_t at = 0;
  for (std::size_t i = 0; at < wire.size(); ++i) {
    const std::size_t n = pieces.empty() ? wire.size() : pieces[i % pieces.size()];
    http.feed(std::string_view(wire).substr(at, n), [&](std::string_view body) {
      sse.feed(body, [&](const SseEvent &e) {
        if (const auto &c = s.stream.on_event(e); c.has_text()) s.texts.push_back(c.text);
      });
    });
    at += n;
  }
  s.http = http.state();
  return s;
}

}  // namespace

TEST_CASE("sse: fields, comments, multi-line data and the optional space", "[llm-sse]") {
  const auto e = events_of(
      ": a comment\n"
      "data:no space\ndata:  two spaces\ndata\n\n"
      "event: token\nid: 7\nunknown: x\ndata: {}\n\n"
      "data: after\n\n");
  REQUIRE(e.size() == 3);
  CHECK(e[0] == ev("no space\n two spaces\n"));  // "data" alone appends an empty line
  CHECK(e[1] == ev("{}", "token", "7"));
  CHECK(e[2] == ev("after", "message", "7"));  // the last event ID persists
}

TEST_CASE("sse: blank lines without data dispatch nothing, and forget the type", "[llm-sse]") {
  const auto e = events_of("event: x\n\n\n\nid: 1\n\ndata\n\ndata:\n\n");
  REQUIRE(e.size() == 2);
  CHECK(e[0] == ev("", "message", "1"));
  CHECK(e[1] == ev("", "message", "1"));
}

TEST_CASE("sse: id with NUL and retry with non-digits are ignored", "[llm-sse]") {
  SseParser p;
  const auto e = events_of("id: 5\nretry: 1500\ndata: a\n\nid: x\0y\nretry: 15s\ndata: b\n\n"s, 0, &p);
  REQUIRE(e.size() == 2);
  CHECK(e[1].last_event_id == "5");
  CHECK(p.retry_ms() == 1500u);
  SseParser q;
  events_of("retry: 99999999999999999999999\ndata: a\n\nretry\n", 0, &q);
  CHECK_FALSE(q.retry_ms().has_value());
  CHECK(q.pending() == false);  // a complete field line leaves nothing buffered
}

TEST_CASE("sse: CRLF, LF and CR line ends, mixed and split between feeds", "[llm-sse]") {
  const std::string mixed = "data: a\r\ndata: b\rdata: c\n\r\ndata: d\r\r\ndata: e\n\n";
  for (std::size_t piece : {0, 1, 2, 3}) {
    const auto e = events_of(mixed, piece);
    REQUIRE(e.size() == 3);
    CHECK(e[0].data == "a\nb\nc");
    CHECK(e[1].data == "d");  // "\r\r\n": CR ends the line, CRLF is the blank line
    CHECK(e[2].data == "e");
  }
  SseParser p;  // a CR at the end of one feed and an LF at the start of the next
  CHECK(events_of("data: x\r", 0, &p).empty());
  CHECK(events_of("\n", 0, &p).empty());
  CHECK(events_of("\r", 0, &p).size() == 1);
}

TEST_CASE("sse: one leading BOM is dropped, even split, and anywhere else it is text", "[llm-sse]") {
  for (std::size_t piece : {0, 1, 2}) {
    const auto e = events_of(
        "\xEF\xBB\xBF"
        "data: x\n\n",
        piece);
    REQUIRE(e.size() == 1);
    CHECK(e[0].data == "x");
  }
  CHECK(events_of("\xEF\xBB\xBF\xEF\xBB\xBF"
                  "data: x\n\n")
            .empty());  // a field named BOM+"data"
  const auto partial = events_of(
      "\xEF\xBB"
      "data: x\n\n",
      1);
  CHECK(partial.empty());  // the broken BOM belongs to the field name
  const auto e = events_of("data: \xEF\xBB\xBF\n\n");
  REQUIRE(e.size() == 1);
  CHECK(e[0].data == "\xEF\xBB\xBF");
}

TEST_CASE("sse: unfinished events are pending, oversize events fail and stay failed", "[llm-sse]") {
  SseParser p;
  CHECK(events_of("data: a\n", 0, &p).empty());
  CHECK(p.pending());
  SseParser small(64);
  CHECK_FALSE(small.feed("data: " + std::string(100, 'x') + "\n\n", [](const SseEvent &) {}));
  CHECK(small.failed());
  CHECK_FALSE(small.feed("data: ok\n\n", [](const SseEvent &) { FAIL("dispatched after failing"); }));
  SseParser lines(64);  // many short lines add up
  std::string many;
  for (int i = 0; i < 20; ++i) many += "data: 12345\n";
  CHECK_FALSE(lines.feed(many, [](const SseEvent &) {}));
  SseParser comment(64);  // a long comment line is buffered too: bounded the same way
  CHECK_FALSE(comment.feed(":" + std::string(100, 'c'), [](const SseEvent &) {}));
}

TEST_CASE("sse: random bytes never crash and always progress", "[llm-sse]") {
  std::mt19937 rng(7);
  const std::string alphabet = "data:event:id:retry: \r\n\r\n:\xEF\xBB\xBF\0"s;
  for (int round = 0; round < 2000; ++round) {
    SseParser p(256);
    std::string input;
    for (std::size_t i = 0, n = rng() % 400; i < n; ++i)
      input.push_back(round % 2 ? static_cast<char>(rng()) : alphabet[rng() % alphabet.size()]);
    std::string_view rest(input);
    while (!rest.empty() && !p.failed()) {
      const auto s = p.step(rest.substr(0, 1 + rng() % 17));
      REQUIRE(s.consumed > 0);
      if (s.event) REQUIRE(s.event->data.size() <= 256);
      rest.remove_prefix(s.consumed);
    }
  }
}

TEST_CASE("openai: chunks, usage, finish reason, [DONE] and errors", "[llm-sse]") {
  const auto comp =
      parse_openai_chunk(R"({"choices":[{"text":"Hi","index":0,"finish_reason":null}]})", OpenAiEndpoint::kCompletions);
  CHECK(comp.kind == Kind::kChunk);
  CHECK(comp.text == "Hi");
  CHECK_FALSE(comp.finish_reason.has_value());
  const auto role =
      parse_openai_chunk(R"({"choices":[{"delta":{"role":"assistant"}}]})", OpenAiEndpoint::kChatCompletions);
  CHECK(role.kind == Kind::kChunk);
  CHECK_FALSE(role.has_text());
  const auto usage = parse_openai_chunk(R"({"choices":[],"usage":{"prompt_tokens":5,"completion_tokens":9}})",
                                        OpenAiEndpoint::kCompletions);
  CHECK(usage.prompt_tokens == 5u);
  CHECK(usage.completion_tokens == 9u);
  CHECK(parse_openai_chunk("[DONE]", OpenAiEndpoint::kCompletions).kind == Kind::kDone);
  CHECK(parse_openai_chunk(" [DONE]", OpenAiEndpoint::kCompletions).kind == Kind::kMalformed);

  const auto err = parse_openai_chunk(R"({"error":{"message":"overloaded","type":"server_error","code":503}})",
                                      OpenAiEndpoint::kChatCompletions);
  CHECK(err.kind == Kind::kError);
  CHECK(err.message == "overloaded");
  const auto vllm =
      parse_openai_chunk(R"({"object":"error","message":"too long","code":400})", OpenAiEndpoint::kCompletions);
  CHECK(vllm.kind == Kind::kError);
  CHECK(vllm.message == "too long");
  CHECK(parse_openai_chunk("{}", OpenAiEndpoint::kCompletions, "error").kind == Kind::kError);
}

TEST_CASE("openai: malformed chunks are results, never exceptions", "[llm-sse]") {
  for (const char *bad :
       {"", "{", "not json", "[1,2]", "\"s\"", R"({"choices":{}})", R"({"choices":[1]})", R"({"choices":[{"text":5}]})",
        R"({"choices":[{"text":"a","finish_reason":1}]})", R"({"usage":{"prompt_tokens":-1}})",
        R"({"usage":{"completion_tokens":"3"}})", R"({"usage":[]})", "{\"choices\":[{\"text\":\"\xFF\"}]}"}) {
    INFO(bad);
    CHECK(parse_openai_chunk(bad, OpenAiEndpoint::kCompletions).kind == Kind::kMalformed);
  }
  CHECK(parse_openai_chunk(R"({"choices":[{"delta":"x"}]})", OpenAiEndpoint::kChatCompletions).kind ==
        Kind::kMalformed);
  std::string deep(100000, '[');
  CHECK(parse_openai_chunk(deep, OpenAiEndpoint::kCompletions).kind == Kind::kMalformed);
  OpenAiStream s(OpenAiEndpoint::kCompletions);
  s.on_event(ev("{oops"));
  s.on_event(ev("[DONE]"));
  s.on_event(ev(R"({"choices":[{"text":"late"}]})"));
  CHECK(s.malformed() == 1);
  CHECK(s.done());
  CHECK(s.late_events() == 1);
  CHECK(s.text_chunks() == 0);
}

TEST_CASE(
    "openai pipeline: every byte split of a chunked chat stream gives "
    "the same result",
    "[llm-sse]") {
  const std::string wire = chunked_response(kChatSse);
  const std::vector<std::string> expected = {"Hel", "lo \xC3\xA9\xC3\xA9", "!"};
  auto check = [&](const Summary &s) {
    CHECK(s.http == HttpResponseReader::State::kComplete);
    CHECK(s.texts == expected);
    CHECK(s.stream.done());
    CHECK(s.stream.events() == 6);
    CHECK(s.stream.malformed() == 0);
    CHECK(s.stream.prompt_tokens() == 7u);
    CHECK(s.stream.completion_tokens() == 3u);
    CHECK(s.stream.finish_reason() == std::optional<std::string>("stop"));
  };
  check(run_pipeline(wire, {}));
  check(run_pipeline(wire, {1}));
  for (std::size_t cut = 1; cut < wire.size(); ++cut) {  // every two-piece split
    INFO("cut " << cut);
    check(run_pipeline(wire, {cut, wire.size()}));
  }
  std::mt19937 rng(42);
  for (int round = 0; round < 200; ++round) {
    std::vector<std::size_t> pieces(16);
    for (auto &p : pieces) p = 1 + rng() % 64;
    check(run_pipeline(wire, pieces));
  }
}

}  // namespace llm_sse_test
