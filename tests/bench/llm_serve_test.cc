// The built-in OpenAI-compatible server (bench/llm/llm_http_server) with the synthetic
// engine, in-process on an ephemeral port: streams read with our own client parsers and
// with real curl, bad input, a client leaving mid-stream, many concurrent streams. Timing
// bounds are loose on purpose: the precise ground-truth check is a benchmark, not this.
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <csignal>
#include <cstdlib>
#include <catch2/catch.hpp>
#include <chrono>
#include <cstdio>
#include <functional>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>
#include <vector>

#include "bench/http/http_response_reader.h"
#include "bench/llm/serve/llm_http_server.h"
#include "bench/llm/stream/openai_stream.h"
#include "bench/llm/stream/sse_parser.h"
#include "bench/llm/synthetic_engine.h"
#include "http_test_client.h"

namespace llm_serve_test {  // this file's names, apart in a unity batch (tests/CMakeLists.txt)

using namespace chaosbench::bench::llm;
using chaosbench::bench::http::HttpResponseReader;
using chaosbench::test::connect_local;
using chaosbench::test::http_request;
using chaosbench::test::send_all;
using Clock = std::chrono::steady_clock;
using namespace std::chrono_literals;

namespace {

std::unique_ptr<LlmHttpServer> start_server(SyntheticTiming timing, LlmServerConfig cfg = {}) {
  cfg.model = "synth";
  cfg.context_tokens = 512;
  return std::make_unique<LlmHttpServer>(cfg, [timing](boost::asio::io_context& ioc) {
    return std::make_unique<SyntheticEngine>(ioc, timing);
  });
}

std::string post_text(const std::string& target, const std::string& body) {
  return "POST " + target + " HTTP/1.1\r\nHost: t\r\nContent-Type: application/json\r\nContent-Length: " +
         std::to_string(body.size()) + "\r\n\r\n" + body;
}

struct StreamResult {
  int status = 0;
  std::string content_type;
  bool chunked = false;
  bool complete = false;
  std::vector<double> token_ms;  // each text chunk's arrival, from the request's send
  std::string text;
  std::optional<std::string> finish;
  std::optional<std::uint64_t> completion_tokens;
  bool done = false;
};

// One streamed request on a fresh connection, read with the client-side parsers.
StreamResult stream(unsigned short port, const std::string& body, OpenAiEndpoint endpoint) {
  StreamResult r;
  const int fd = connect_local(port, 10s);
  REQUIRE(fd >= 0);
  const auto sent = Clock::now();
  REQUIRE(send_all(fd, post_text(endpoint == OpenAiEndpoint::kCompletions ? "/v1/completions" : "/v1/chat/completions",
                                 body)));
  HttpResponseReader http;
  SseParser sse;
  OpenAiStream openai(endpoint);
  char buf[8192];
  while (http.state() == HttpResponseReader::State::kHead || http.state() == HttpResponseReader::State::kBody) {
    const auto n = ::recv(fd, buf, sizeof buf, 0);
    if (n <= 0) break;
    const auto now = Clock::now();
    http.feed(std::string_view(buf, static_cast<std::size_t>(n)), [&](std::string_view piece) {
      sse.feed(piece, [&](const SseEvent& e) {
        const auto& c = openai.on_event(e);
        if (c.has_text()) {
          r.token_ms.push_back(std::chrono::duration<double, std::milli>(now - sent).count());
          r.text += c.text;
        }
      });
    });
  }
  ::close(fd);
  r.status = http.status();
  r.content_type = http.content_type();
  r.chunked = http.chunked();
  r.complete = http.state() == HttpResponseReader::State::kComplete;
  r.finish = openai.finish_reason();
  r.completion_tokens = openai.completion_tokens();
  r.done = openai.done();
  return r;
}

bool wait_for(const std::function<bool()>& ok, std::chrono::milliseconds limit) {
  const auto end = Clock::now() + limit;
  while (Clock::now() < end) {
    if (ok()) return true;
    std::this_thread::sleep_for(5ms);
  }
  return ok();
}

const char* kStreamBody =
    R"({"model":"synth","prompt":"hello","max_tokens":64,"stream":true,"stream_options":{"include_usage":true}})";

}  // namespace

TEST_CASE("llm-serve: a streamed completion has the synthetic timing", "[llm-serve]") {
  auto server = start_server({150ms, 20ms, 64});
  const auto r = stream(server->port(), kStreamBody, OpenAiEndpoint::kCompletions);
  CHECK(r.status == 200);
  CHECK(r.content_type == "text/event-stream");
  CHECK(r.chunked);
  CHECK(r.complete);
  REQUIRE(r.token_ms.size() == 64);
  CHECK(r.finish == "length");
  CHECK(r.completion_tokens == 64u);
  CHECK(r.done);
  CHECK(r.text.substr(0, 10) == " the quick");
  // TTFT near 150 ms, then ~20 ms apart: 63 gaps near 1260 ms. Loose bounds for a busy box.
  CHECK(r.token_ms.front() >= 140);
  CHECK(r.token_ms.front() < 400);
  const double span = r.token_ms.back() - r.token_ms.front();
  CHECK(span >= 63 * 20 - 15);
  CHECK(span < 63 * 20 + 400);
  CHECK(wait_for([&] { return server->engine().active() == 0 && server->running() == 0; }, 1s));
}

TEST_CASE("llm-serve: chat streams, whole answers, models, health, metrics", "[llm-serve]") {
  auto server = start_server({10ms, 1ms, 5});
  const auto chat = stream(server->port(),
                           R"({"model":"synth","messages":[{"role":"user","content":"hi"}],"max_tokens":64,"stream":true})",
                           OpenAiEndpoint::kChatCompletions);
  CHECK(chat.status == 200);
  CHECK(chat.token_ms.size() == 5);
  CHECK(chat.finish == "stop");
  CHECK(chat.done);
  const auto whole = http_request(server->port(), "POST", "/v1/completions",
                                  R"({"model":"synth","prompt":"abc","max_tokens":3})");
  REQUIRE(whole.status == 200);
  const auto j = nlohmann::json::parse(whole.body);
  CHECK(j["choices"][0]["text"] == " the quick brown");
  CHECK(j["choices"][0]["finish_reason"] == "length");
  CHECK(j["usage"]["prompt_tokens"] == 3);
  CHECK(j["usage"]["completion_tokens"] == 3);
  const auto models = http_request(server->port(), "GET", "/v1/models");
  CHECK(models.status == 200);
  CHECK(nlohmann::json::parse(models.body)["data"][0]["id"] == "synth");
  CHECK(http_request(server->port(), "GET", "/health").status == 200);
  const auto metrics = http_request(server->port(), "GET", "/metrics");
  CHECK(metrics.status == 200);
  CHECK(metrics.body.find("vllm:generation_tokens_total{model_name=\"synth\"} 8") != std::string::npos);
  CHECK(metrics.body.find("vllm:num_requests_running{model_name=\"synth\"} 0") != std::string::npos);
  CHECK(http_request(server->port(), "GET", "/v1/completions").status == 405);
  CHECK(http_request(server->port(), "GET", "/nope").status == 404);
}

TEST_CASE("llm-serve: keep-alive carries several answers on one connection", "[llm-serve]") {
  auto server = start_server({1ms, 1ms, 4});
  const int fd = connect_local(server->port());
  REQUIRE(fd >= 0);
  std::string pending;
  for (int i = 0; i < 3; ++i) {
    REQUIRE(send_all(fd, post_text("/v1/completions", R"({"model":"synth","prompt":"x","max_tokens":8})")));
    const auto reply = chaosbench::test::read_reply(fd, pending);
    CHECK(reply.status == 200);
    CHECK(nlohmann::json::parse(reply.body)["usage"]["completion_tokens"] == 4);
  }
  ::close(fd);
}

TEST_CASE("llm-serve: bad input gets the OpenAI error object", "[llm-serve]") {
  auto server = start_server({1ms, 1ms, 4});
  const auto port = server->port();
  auto code_of = [](const std::string& body) { return nlohmann::json::parse(body)["error"]["code"]; };
  const auto malformed = http_request(port, "POST", "/v1/completions", "{not json");
  CHECK(malformed.status == 400);
  CHECK(nlohmann::json::parse(malformed.body).contains("error"));
  const auto unknown = http_request(port, "POST", "/v1/completions", R"({"model":"gpt-9","prompt":"x"})");
  CHECK(unknown.status == 404);
  CHECK(code_of(unknown.body) == "model_not_found");
  const auto oversize = http_request(port, "POST", "/v1/completions",
                                     R"({"model":"synth","prompt":")" + std::string(600, 'a') + R"("})");
  CHECK(oversize.status == 400);
  CHECK(code_of(oversize.body) == "context_length_exceeded");
  const auto huge = http_request(port, "POST", "/v1/completions", std::string(2u << 20, 'a'));
  CHECK(huge.status == 413);
}

TEST_CASE("llm-serve: a stream outlives request_timeout and an idle keep-alive connection closes", "[llm-serve]") {
  LlmServerConfig cfg;
  cfg.request_timeout = 300ms;  // bounds reading a request and each write, not an answer
  cfg.idle_timeout = std::chrono::seconds(1);
  cfg.max_connections = 1;  // the stream's connection must be let go once its client closes it
  auto server = start_server({50ms, 100ms, 8}, cfg);  // about 0.75 s an answer
  const auto r = stream(server->port(), kStreamBody, OpenAiEndpoint::kCompletions);
  CHECK(r.complete);
  CHECK(r.done);
  CHECK(r.token_ms.size() == 8);

  // A whole answer, then nothing: the server closes the connection after idle_timeout.
  std::this_thread::sleep_for(200ms);
  const int fd = connect_local(server->port(), 10s);
  REQUIRE(fd >= 0);
  timeval limit{6, 0};  // a server that never closes fails the test instead of hanging it
  ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &limit, sizeof limit);
  REQUIRE(send_all(fd, post_text("/v1/completions", R"({"model":"synth","prompt":"hi","max_tokens":2})")));
  const auto sent = Clock::now();
  char buf[4096];
  std::string got;
  bool closed = false;
  while (Clock::now() - sent < 5s) {
    const auto n = ::recv(fd, buf, sizeof buf, 0);
    if (n < 0) break;  // the receive limit passed: still open
    if (n == 0) {
      closed = true;
      break;
    }
    got.append(buf, static_cast<std::size_t>(n));
  }
  ::close(fd);
  CHECK(got.starts_with("HTTP/1.1 200"));  // not 503: the first connection was let go
  CHECK(closed);
  CHECK(Clock::now() - sent >= 900ms);  // not before idle_timeout
}

TEST_CASE("llm-serve: over max_running gets 429", "[llm-serve]") {
  LlmServerConfig cfg;
  cfg.max_running = 1;
  auto server = start_server({2s, 1ms, 1}, cfg);
  const int fd = connect_local(server->port());
  REQUIRE(send_all(fd, post_text("/v1/completions", kStreamBody)));
  REQUIRE(wait_for([&] { return server->running() == 1; }, 2s));
  CHECK(http_request(server->port(), "POST", "/v1/completions", R"({"model":"synth","prompt":"x"})").status == 429);
  ::close(fd);
  CHECK(wait_for([&] { return server->running() == 0 && server->engine().active() == 0; }, 1s));
}

TEST_CASE("llm-serve: a client leaving mid-stream frees its request", "[llm-serve]") {
  auto server = start_server({10ms, 50ms, 64});
  const int fd = connect_local(server->port());
  REQUIRE(send_all(fd, post_text("/v1/completions", kStreamBody)));
  char buf[4096];
  REQUIRE(::recv(fd, buf, sizeof buf, 0) > 0);  // the head (and maybe a token) came
  CHECK(server->engine().active() == 1);
  ::close(fd);
  const auto left = Clock::now();
  CHECK(wait_for([&] { return server->engine().active() == 0 && server->running() == 0; }, 1s));
  CHECK(Clock::now() - left < 1s);
  CHECK(server->metrics().cancelled() == 1);
}

TEST_CASE("llm-serve: 200 concurrent streams all complete", "[llm-serve]") {
  auto server = start_server({50ms, 5ms, 32});
  std::atomic<int> ok{0};
  std::vector<std::thread> clients;
  for (int i = 0; i < 200; ++i)
    clients.emplace_back([&] {
      const auto r = stream(server->port(), kStreamBody, OpenAiEndpoint::kCompletions);
      if (r.status == 200 && r.token_ms.size() == 32 && r.done && r.complete) ++ok;
    });
  for (auto& t : clients) t.join();
  CHECK(ok == 200);
  CHECK(wait_for([&] { return server->engine().active() == 0 && server->running() == 0; }, 1s));
}

TEST_CASE("llm-serve: curl -N sees well-formed SSE lines", "[llm-serve]") {
  if (std::system("command -v curl >/dev/null 2>&1") != 0) {
    WARN("skipped: curl is not installed");
    return;
  }
  auto server = start_server({20ms, 2ms, 8});
  const std::string cmd = "curl -sS -N --max-time 10 -H 'Content-Type: application/json' -d '" +
                          std::string(kStreamBody) + "' http://127.0.0.1:" + std::to_string(server->port()) +
                          "/v1/completions";
  FILE* p = ::popen(cmd.c_str(), "r");
  REQUIRE(p != nullptr);
  std::string out;
  char buf[4096];
  while (auto n = std::fread(buf, 1, sizeof buf, p)) out.append(buf, n);
  CHECK(::pclose(p) == 0);
  std::vector<std::string> data;
  std::size_t start = 0;
  for (std::size_t end; (end = out.find("\n\n", start)) != std::string::npos; start = end + 2) {
    const auto event = out.substr(start, end - start);
    REQUIRE(event.rfind("data: ", 0) == 0);
    REQUIRE(event.find('\n') == std::string::npos);
    data.push_back(event.substr(6));
  }
  CHECK(start == out.size());
  REQUIRE(data.size() == 8 + 3);  // tokens, finish, usage, [DONE]
  CHECK(data.back() == "[DONE]");
  CHECK(nlohmann::json::parse(data[0])["choices"][0]["text"] == " the");
  CHECK(nlohmann::json::parse(data[9])["usage"]["completion_tokens"] == 8);
}

// Both engines: the synthetic one, and a one-layer transformer (the default engine).
TEST_CASE("llm-serve: the worker announces its port and stops on SIGTERM", "[llm-serve]") {
  const auto engine = GENERATE(std::vector<const char*>{"--engine", "synthetic", "--synthetic-first-token-us", "1000",
                                                        "--synthetic-cadence-us", "1000", "--synthetic-tokens", "2"},
                               std::vector<const char*>{"--layers", "1", "--dim", "32", "--heads", "4", "--kv-heads",
                                                        "2", "--ffn", "32", "--context", "256", "--kv-blocks", "64"});
  const std::string log = "/tmp/chaosbench_llm_serve_" + std::to_string(::getpid()) + ".log";
  const pid_t pid = ::fork();
  REQUIRE(pid >= 0);
  if (pid == 0) {
    std::freopen(log.c_str(), "w", stderr);
    std::vector<const char*> argv = {CHAOSBENCH_BINARY, "worker", "llm-serve", "--port", "0"};
    argv.insert(argv.end(), engine.begin(), engine.end());
    argv.push_back(nullptr);
    ::execv(CHAOSBENCH_BINARY, const_cast<char* const*>(argv.data()));
    ::_exit(127);
  }
  unsigned short port = 0;
  wait_for(
      [&] {
        FILE* f = std::fopen(log.c_str(), "r");
        if (f == nullptr) return false;
        char line[512] = {};
        const bool got = std::fgets(line, sizeof line, f) != nullptr;
        std::fclose(f);
        const std::string text = got ? line : "";
        if (const auto colon = text.rfind(':'); text.find(" on ") != std::string::npos && colon != std::string::npos)
          port = static_cast<unsigned short>(std::atoi(text.c_str() + colon + 1));
        return port != 0;
      },
      10s);
  CHECK(port != 0);
  if (port != 0) {
    const auto r = http_request(port, "POST", "/v1/completions",
                                R"({"model":"chaosbench-tiny","prompt":"x","max_tokens":4})");
    CHECK(r.status == 200);
  }
  ::kill(pid, SIGTERM);
  int status = 0;
  REQUIRE(::waitpid(pid, &status, 0) == pid);
  CHECK(WIFEXITED(status));
  CHECK(WEXITSTATUS(status) == 0);
  std::remove(log.c_str());
}

}  // namespace llm_serve_test
