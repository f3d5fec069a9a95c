// LlmLoadSettings' flags (llm_load_settings.h): encode and decode round-trip, the worker's
// defaults are the struct's, and `worker llm-load` refuses a bad --dataset as a usage error
// naming the file and line, and an endpoint that never becomes ready.
#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>
#include <utility>

#include "bench/llm/load/llm_load_settings.h"
#include "bench/http/http_client_endpoint.h"

namespace llm_load_settings_test {  // this file's names, apart in a unity batch (tests/CMakeLists.txt)

using namespace chaosbench::bench::llm;
using namespace std::chrono_literals;
using chaosbench::common::Duration;

TEST_CASE("llm-load settings: defaults and a full set round-trip through flags", "[llm-load]") {
  CHECK(decode_llm_load_settings({}) == LlmLoadSettings{});
  CHECK(decode_llm_load_settings(encode_llm_load_settings(LlmLoadSettings{})) == LlmLoadSettings{});
  LlmLoadSettings s;
  s.api = OpenAiEndpoint::kChatCompletions;
  s.stream = false;
  s.arrival = Arrival::kConstant;
  s.rate = 12.5;
  s.concurrency = 3;
  s.duration = Duration{2500ms};
  s.input = {LengthDistribution::kUniform, 0, 0, 16, 256, 4096};
  s.output = {LengthDistribution::kLognormal, 128, 64, 1, 1, 1000};
  s.ignore_eos = false;
  s.dataset = "/tmp/p.jsonl";
  s.slo.ttft = Duration{200ms};
  s.slo.tpot = Duration{25us};
  s.slo.e2e = Duration{3s};
  s.timeout = Duration{9s};
  s.window = Duration{250ms};
  s.max_in_flight = 77;
  s.find_peak = PeakSearchSettings{2, 95, 0.2, Duration{1500ms}, 9};
  CHECK(decode_llm_load_settings(encode_llm_load_settings(s)) == s);
}

TEST_CASE("llm-load settings: bad flags are refused with the flag named", "[llm-load]") {
  CHECK_THROWS_WITH(decode_llm_load_settings({"--arrival", "bursty"}), Catch::Contains("--arrival"));
  CHECK_THROWS_WITH(decode_llm_load_settings({"--output", "fixed"}), Catch::Contains("--output"));
  CHECK_THROWS_WITH(decode_llm_load_settings({"--rate", "0"}), Catch::Contains("--rate"));
}

namespace {

// Runs `chaosbench worker llm-load ARGS`; its exit status and output (stderr too).
std::pair<int, std::string> worker_llm_load(const std::string& args) {
  const std::string cmd = std::string(CHAOSBENCH_BINARY) + " worker llm-load " + args + " 2>&1";
  FILE* out = ::popen(cmd.c_str(), "r");
  if (out == nullptr) return {-1, "popen failed"};
  std::string text;
  char buf[512];
  while (std::fgets(buf, sizeof buf, out)) text += buf;
  const int status = ::pclose(out);
  return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, text};
}

}  // namespace

TEST_CASE("llm-load worker: a malformed dataset is a usage error naming file and line", "[llm-load]") {
  char path[] = "/tmp/llm_load_dataset_XXXXXX";
  const int fd = ::mkstemp(path);
  REQUIRE(fd >= 0);
  ::close(fd);
  struct Remove {
    const char* p;
    ~Remove() { std::remove(p); }
  } remove{path};
  std::ofstream(path) << "{\"prompt\": \"fine\"}\n{\"prompt\": 3}\n";
  const auto [status, text] = worker_llm_load(std::string("--endpoints http://127.0.0.1:9 --wait-ready-ms 0 --dataset ") + path);
  INFO(text);
  CHECK(status == 2);
  CHECK_THAT(text, Catch::Contains(path) && Catch::Contains("line 2"));
}

TEST_CASE("llm-load worker: an endpoint that never becomes ready is an error naming it", "[llm-load]") {
  // Port 9 (discard) on loopback: nothing listens there in a test environment.
  const auto [status, text] = worker_llm_load("--endpoints http://127.0.0.1:9 --wait-ready-ms 200");
  INFO(text);
  CHECK(status == 1);
  CHECK_THAT(text, Catch::Contains("not ready") && Catch::Contains("127.0.0.1:9"));
}

TEST_CASE("llm-load worker: --endpoints parses as a comma-separated list", "[llm-load]") {
  std::string error;
  const auto list = chaosbench::bench::http::parse_http_endpoint_list("http://10.0.0.1:8000,,http://b", error);
  REQUIRE(list);
  REQUIRE(list->size() == 2);
  CHECK((*list)[0].text() == "10.0.0.1:8000");
  CHECK((*list)[1].text() == "b:80");
  CHECK_FALSE(chaosbench::bench::http::parse_http_endpoint_list(",", error));
  CHECK_FALSE(chaosbench::bench::http::parse_http_endpoint_list("http://a:1,b:2", error));
  CHECK_THAT(error, Catch::Contains("b:2"));
}

}  // namespace llm_load_settings_test
