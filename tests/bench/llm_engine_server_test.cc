// The built-in server with the transformer engine (bench/llm/transformer/), in-process on
// an ephemeral port: a streamed completion read off a real socket (parsed after the
// connection closes, with the client-side parsers), a client that leaves mid-stream
// (its KV blocks come back), the 429 past the engine's queue, the vLLM gauges and
// histograms on /metrics, and a stop while a stream runs.
#include <sys/socket.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <chrono>
#include <functional>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>

#include "bench/http/http_response_reader.h"
#include "bench/llm/serve/llm_http_server.h"
#include "bench/llm/stream/openai_stream.h"
#include "bench/llm/stream/sse_parser.h"
#include "bench/llm/transformer/transformer_engine.h"
#include "http_test_client.h"

namespace llm_engine_server_test {  // this file's names, apart in a unity batch (tests/CMakeLists.txt)

using namespace chaosbench::bench::llm;
using chaosbench::bench::http::HttpResponseReader;
using chaosbench::test::connect_local;
using chaosbench::test::http_request;
using chaosbench::test::request_text;
using chaosbench::test::send_all;
using namespace std::chrono_literals;

namespace {

struct Served {
  std::unique_ptr<LlmHttpServer> server;
  const TransformerEngine* engine = nullptr;
};

Served serve(int max_running, int max_waiting) {
  TransformerEngineConfig e;
  e.model = {2, 64, 4, 2, 96, "fp32"};
  e.scheduler = {max_running, 64, 1024, 16, max_waiting};
  e.context = 4096;
  LlmServerConfig cfg;
  cfg.model = "tiny";
  cfg.context_tokens = 4096;
  Served s;
  s.server = std::make_unique<LlmHttpServer>(cfg, [&](boost::asio::io_context&) {
    auto engine = std::make_unique<TransformerEngine>(e);
    s.engine = engine.get();
    return engine;
  });
  return s;
}

std::string body(int max_tokens) {
  return R"({"model":"tiny","prompt":"caf\u00e9 au lait","stream":true,"ignore_eos":true,"max_tokens":)" +
         std::to_string(max_tokens) + R"(,"temperature":0,"stream_options":{"include_usage":true}})";
}

bool eventually(const std::function<bool()>& ok, std::chrono::milliseconds limit) {
  for (const auto end = std::chrono::steady_clock::now() + limit; std::chrono::steady_clock::now() < end;
       std::this_thread::sleep_for(2ms))
    if (ok()) return true;
  return ok();
}

// A long streamed request left open on its own socket; returns the socket.
int open_stream(unsigned short port, int max_tokens) {
  const int fd = connect_local(port);
  REQUIRE(fd >= 0);
  REQUIRE(send_all(fd, request_text("POST", "/v1/completions", body(max_tokens))));
  return fd;
}

}  // namespace

TEST_CASE("llm-engine-server: a streamed completion from the transformer", "[llm-engine]") {
  auto s = serve(8, 8);
  const int fd = open_stream(s.server->port(), 40);
  std::string raw;
  char buf[4096];
  for (ssize_t n; (n = ::recv(fd, buf, sizeof buf, 0)) > 0;) {
    raw.append(buf, static_cast<std::size_t>(n));
    if (raw.find("data: [DONE]") != std::string::npos && raw.ends_with("0\r\n\r\n")) break;
  }
  ::close(fd);
  HttpResponseReader http;
  SseParser sse;
  OpenAiStream openai(OpenAiEndpoint::kCompletions);
  std::uint64_t events = 0;
  std::string streamed;
  http.feed(raw, [&](std::string_view piece) {
    sse.feed(piece, [&](const SseEvent& e) {
      ++events;
      REQUIRE_NOTHROW(e.data == "[DONE]" ? nlohmann::json() : nlohmann::json::parse(e.data));
      streamed += openai.on_event(e).text;
    });
  });
  CHECK(http.status() == 200);
  CHECK(http.state() == HttpResponseReader::State::kComplete);
  // A character made of several byte tokens goes out whole, in one event: at most one
  // event per token, and the text is the whole answer's, byte for byte.
  CHECK(openai.text_chunks() >= 1);
  CHECK(openai.text_chunks() <= 40);
  CHECK(openai.finish_reason() == "length");
  CHECK(openai.completion_tokens() == 40);
  CHECK(openai.prompt_tokens() == 13);  // "café au lait" in UTF-8 bytes
  CHECK(openai.done());
  CHECK(openai.malformed() == 0);
  CHECK(events == openai.text_chunks() + 3);
  const auto metrics = http_request(s.server->port(), "GET", "/metrics");
  CHECK(metrics.body.find("vllm:time_to_first_token_seconds_count{model_name=\"tiny\"} 1") != std::string::npos);
  CHECK(metrics.body.find("vllm:time_per_output_token_seconds_count{model_name=\"tiny\"} 1") != std::string::npos);
  CHECK(metrics.body.find("vllm:kv_cache_usage_perc{model_name=\"tiny\"} 0") != std::string::npos);
  CHECK(metrics.body.find("vllm:num_preemptions_total{model_name=\"tiny\"} 0") != std::string::npos);
  // The same request answered whole (stream_options go only with a stream).
  const std::string whole_body =
      R"({"model":"tiny","prompt":"caf\u00e9 au lait","ignore_eos":true,"max_tokens":40,"temperature":0})";
  const auto whole = http_request(s.server->port(), "POST", "/v1/completions", whole_body);
  REQUIRE(whole.status == 200);
  CHECK(nlohmann::json::parse(whole.body)["choices"][0]["text"].get<std::string>() == streamed);
}

TEST_CASE("llm-engine-server: a client leaving mid-stream gives its KV blocks back", "[llm-engine]") {
  auto s = serve(8, 8);
  // The gauge a user (and a scrape) reads: vLLM's kv_cache_usage_perc on /metrics.
  auto gauge = [&] {
    const auto body = http_request(s.server->port(), "GET", "/metrics").body;
    const std::string name = "vllm:kv_cache_usage_perc{model_name=\"tiny\"} ";
    const auto at = body.find(name);
    return at == std::string::npos ? -1.0 : std::stod(body.substr(at + name.size()));
  };
  const int fd = open_stream(s.server->port(), 4000);
  REQUIRE(eventually([&] { return s.engine->kv_cache_usage() > 0.0; }, 2s));
  CHECK(gauge() > 0.0);
  char buf[4096];
  REQUIRE(::recv(fd, buf, sizeof buf, 0) > 0);
  ::close(fd);
  CHECK(eventually([&] { return s.engine->kv_cache_usage() == 0.0 && s.engine->active() == 0; }, 1s));
  CHECK(eventually([&] { return gauge() == 0.0; }, 1s));
  CHECK(eventually([&] { return s.server->running() == 0 && s.server->metrics().cancelled() == 1; }, 1s));
}

TEST_CASE("llm-engine-server: past max_waiting the server answers 429", "[llm-engine]") {
  auto s = serve(1, 1);
  const int a = open_stream(s.server->port(), 4000);
  const int b = open_stream(s.server->port(), 4000);
  REQUIRE(eventually([&] { return s.engine->active() == 2; }, 2s));
  const auto refused = http_request(s.server->port(), "POST", "/v1/completions", R"({"model":"tiny","prompt":"x"})");
  CHECK(refused.status == 429);
  const auto error = nlohmann::json::parse(refused.body, nullptr, false);
  CHECK(error["error"]["type"] == "rate_limit_error");
  CHECK(error["error"]["code"] == "rate_limit_exceeded");
  CHECK(s.server->metrics().rejected() == 1);
  ::close(a);
  ::close(b);
  CHECK(eventually([&] { return s.engine->active() == 0 && s.engine->kv_cache_usage() == 0.0; }, 1s));
}

TEST_CASE("llm-engine-server: stopping the server mid-stream drops the engine's requests first", "[llm-engine]") {
  auto s = serve(8, 8);
  const int fd = open_stream(s.server->port(), 4000);
  REQUIRE(eventually([&] { return s.engine->kv_cache_usage() > 0.0; }, 2s));
  s.server->stop();  // the io_context stops; the engine's thread must not post to it afterwards
  CHECK(s.engine->kv_cache_usage() == 0.0);
  CHECK(s.engine->running() == 0);
  s.server.reset();
  ::close(fd);
}

}  // namespace llm_engine_server_test
