// Issue 15: seeded malformed traffic against a real `worker serve` process (it must never
// crash, answer each malformed request with a 4xx or a close, and keep its memory bounded)
// and against the load generator's response parser in-process. The seed is printed;
// CHAOSBENCH_FUZZ_SEED=<n> replays a run.
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <catch2/catch.hpp>
#include <cstdlib>
#include <iostream>
#include <map>
#include <mutex>
#include <random>
#include <thread>

#include "bench/http/http_response_reader.h"
#include "http_test_client.h"
#include "serve_process.h"

namespace serve_fuzz_test {  // this file's names, apart in a unity batch (tests/CMakeLists.txt)

using namespace chaosbench::test;
using namespace std::chrono_literals;

namespace {

std::uint64_t fuzz_seed() {
  const char* env = std::getenv("CHAOSBENCH_FUZZ_SEED");
  const std::uint64_t seed = env ? std::strtoull(env, nullptr, 10) : 20260115;
  std::cout << "fuzz seed " << seed << " (CHAOSBENCH_FUZZ_SEED=" << seed << " replays it)\n";
  return seed;
}

const std::string kValidBody =
    R"({"inputs":[{"name":"input","shape":[1,8],"datatype":"FP32","data":[1,2,3,4,5,6,7,8]}]})";

struct Malformed {
  Malformed(std::string b, bool keep = false, bool half = false) : bytes(std::move(b)), keep_alive(keep), half_close(half) {}
  std::string bytes;
  bool keep_alive = false;  // well-formed HTTP (a 4xx on a connection that may stay open)
  bool half_close = false;  // the client stops sending after the bytes
};

std::string random_bytes(std::mt19937_64& rng, std::size_t n) {
  std::string s(n, '\0');
  for (auto& c : s) c = static_cast<char>(rng() % 256);
  return s;
}

// One request that is wrong at the HTTP or the JSON level, never a valid one.
Malformed make_malformed(std::mt19937_64& rng) {
  const std::string infer = "POST /v2/models/mlp/infer HTTP/1.1\r\nHost: f\r\n";
  switch (rng() % 16) {
    case 0: return {"G\x01T /v2/health/live HTTP/1.1\r\n\r\n"};
    case 1: return {"BREW /v2/health/live HTTP/1.1\r\nHost: f\r\n\r\n", true};
    case 2: return {infer + "Content-Length: " + std::to_string(rng()) + "99999999999\r\n\r\n"};
    case 3: return {infer + "Content-Length: -" + std::to_string(rng() % 1000 + 1) + "\r\n\r\n"};
    case 4: return {infer + "Content-Length: " + std::to_string(65537 + rng() % 1'000'000'000) + "\r\n\r\n{"};
    case 5: return {infer + "Transfer-Encoding: chunked\r\n\r\n" + (rng() % 2 ? "zz\r\nxx\r\n" : "5\r\nab\r\n0\r\n\r\n")};
    case 6: {
      const std::string body = kValidBody.substr(0, rng() % kValidBody.size());  // a proper prefix: never JSON
      return {request_text("POST", "/v2/models/mlp/infer", body), true};
    }
    case 7: {
      const std::string body(1 + rng() % 100'000, rng() % 2 ? '[' : '{');
      return {request_text("POST", "/v2/models/mlp/infer", body), true};
    }
    case 8: return {"GET /v2/health/live HTTP/1.1\r\nX-Big: " + std::string(9000 + rng() % 60000, 'h') + "\r\n\r\n"};
    case 9: {
      const std::string whole = request_text("POST", "/v2/models/mlp/infer", kValidBody);
      return {whole.substr(0, 1 + rng() % (whole.size() - 1)), false, true};
    }
    case 10: return {random_bytes(rng, 1 + rng() % 300) + "\r\n\r\n"};
    case 11: return {"GET /v2/health/live HTTP/" + std::to_string(rng() % 10) + ".x\r\n\r\n"};
    case 12: {
      std::string body = kValidBody;
      body.replace(body.find("[1,8]"), 5, rng() % 2 ? "[1,9]" : "[-3,8]");
      return {request_text("POST", "/v2/models/mlp/infer", body), true};
    }
    case 13: {  // a control byte anywhere in the head: method, target, version, names, values
      std::string whole = request_text("POST", "/v2/models/mlp/infer", kValidBody);
      const char ctl = static_cast<char>(rng() % 2 ? rng() % 9 : 0x0e + rng() % 18);
      whole.insert(rng() % whole.find("\r\n\r\n"), 1, ctl);
      return {whole};
    }
    case 14: return {request_text("POST", "/v2/models/mlp/infer", std::string(65537 + rng() % 100'000, ' '))};
    default: return {"GET /v2/health/live HTTP/1.1\r\nNoColonHere\r\n\r\n"};
  }
}

struct Tally {
  std::mutex mu;
  std::map<int, int> statuses;  // 0: closed without an answer
  std::vector<std::string> bad;  // requests answered other than 4xx or a close
};

// Sends `count` malformed requests; the first reply of each must be a 4xx or a close.
void fuzz_connection_worker(unsigned short port, std::uint64_t seed, int count, Tally& tally) {
  std::mt19937_64 rng(seed);
  int keep = -1;  // a persistent connection for keep-alive requests
  std::string keep_pending;
  for (int i = 0; i < count; ++i) {
    const Malformed m = make_malformed(rng);
    const bool reuse = m.keep_alive && keep >= 0;
    const int fd = reuse ? keep : connect_local(port);
    std::string fresh_pending;
    std::string& pending = reuse ? keep_pending : fresh_pending;
    HttpReply reply;
    if (fd >= 0 && send_all(fd, m.bytes)) {
      if (m.half_close) ::shutdown(fd, SHUT_WR);
      reply = read_reply(fd, pending);
    }
    std::lock_guard lock(tally.mu);
    ++tally.statuses[reply.status];
    if (reply.status != 0 && (reply.status < 400 || reply.status > 499) && tally.bad.size() < 5)
      tally.bad.push_back(std::to_string(reply.status) + " for: " + m.bytes.substr(0, 120));
    if (m.keep_alive && reply.status != 0 && !reply.closed) {
      if (!reuse && keep >= 0) ::close(keep);
      keep = fd;
      if (!reuse) keep_pending.clear();
    } else {
      if (fd >= 0) ::close(fd);
      if (reuse) keep = -1;
    }
  }
  if (keep >= 0) ::close(keep);
}

}  // namespace

TEST_CASE("serve-fuzz: 10,000 malformed requests get a 4xx or a close and the server survives in bounded memory",
          "[serve-fuzz]") {
  const std::uint64_t seed = fuzz_seed();
  ServeProcess server({"--request-timeout", "1s", "--body-limit", "64KiB", "--max-buffered", "8MiB"});
  const long rss_start = server.rss_kb();
  // Slow senders first, all at once: each must get 408 about a second in.
  std::vector<int> slow;
  for (int i = 0; i < 20; ++i) {
    const int fd = connect_local(server.port());
    if (fd >= 0 && send_all(fd, i % 2 ? "GET /v2/he" : "POST /v2/models/mlp/infer HTTP/1.1\r\nContent-Length: 50\r\n\r\n{"))
      slow.push_back(fd);
  }
  int slow_408 = 0;
  for (int fd : slow) {
    std::string pending;
    slow_408 += read_reply(fd, pending).status == 408;
    ::close(fd);
  }
  CHECK(slow_408 == static_cast<int>(slow.size()));
  Tally tally;
  constexpr int kThreads = 4, kPerThread = 2600;
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t)
    threads.emplace_back([&, t] { fuzz_connection_worker(server.port(), seed + static_cast<std::uint64_t>(t), kPerThread, tally); });
  for (auto& t : threads) t.join();
  INFO("seed " << seed << "; server log: " << server.log());
  REQUIRE(server.alive());
  int total = 0;
  for (const auto& [status, n] : tally.statuses) {
    std::cout << "  status " << status << ": " << n << "\n";
    total += n;
  }
  CHECK(total == kThreads * kPerThread);
  for (const auto& b : tally.bad) FAIL_CHECK(b);
  const long rss_end = server.rss_kb();
  std::cout << "fuzz: server RSS " << rss_start / 1024 << " MiB at start, " << rss_end / 1024 << " MiB at the end\n";
  CHECK(rss_end - rss_start < 64 * 1024);
  const auto ok = http_request(server.port(), "POST", "/v2/models/mlp/infer", kValidBody);
  CHECK(ok.status == 200);
}

TEST_CASE("serve-fuzz: 20,000 malformed responses never break the load generators' response reader", "[serve-fuzz]") {
  using Reader = chaosbench::bench::http::HttpResponseReader;
  std::mt19937_64 rng(fuzz_seed());
  const std::vector<std::string> seeds{
      "HTTP/1.1 200 OK\r\nContent-Length: 5\r\nConnection: keep-alive\r\n\r\nhello",
      "HTTP/1.0 503 Service Unavailable\r\ncontent-length: 2\r\n\r\n{}",
      "HTTP/1.1 400 Bad Request\r\nConnection: close\r\n\r\n",
      "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n0\r\n\r\n"};
  const std::vector<std::string> junk{"Content-Length: 18446744073709551616\r\n", "Content-Length: -1\r\n",
                                      "Transfer-Encoding: chunked\r\n", "\r\n\r\n", "HTTP/1.1 ", ":", "\r\n",
                                      "Content-Length: 99999999999\r\n", "Content-Length:\r\n", "\0", "-",
                                      std::string(70'000, 'x')};
  std::map<Reader::State, int> outcomes;
  for (int i = 0; i < 20'000; ++i) {
    std::string data = seeds[rng() % seeds.size()];
    for (int e = 0, edits = 1 + static_cast<int>(rng() % 4); e < edits && !data.empty(); ++e) {
      const std::size_t at = rng() % data.size();
      switch (rng() % 4) {
        case 0: data.resize(at); break;
        case 1: data[at] = static_cast<char>(rng() % 256); break;
        case 2: data.insert(at, junk[rng() % junk.size()]); break;
        default: data.erase(at, 1 + rng() % 8); break;
      }
    }
    Reader reader({64 * 1024, 1ull << 30});  // the KServe load generator's bounds
    std::uint64_t body = 0;
    const std::size_t used = reader.feed(data, [&](std::string_view piece) { body += piece.size(); });
    if (reader.state() == Reader::State::kBody || reader.state() == Reader::State::kHead) reader.finish_at_eof();
    ++outcomes[reader.state()];
    INFO("case " << i);
    REQUIRE(used <= data.size());
    REQUIRE(body <= data.size());
    if (reader.head_done()) {
      REQUIRE(reader.status() >= 100);
      REQUIRE(reader.status() <= 999);
    }
  }
  std::cout << "reader fuzz: " << outcomes[Reader::State::kComplete] << " complete, "
            << outcomes[Reader::State::kError] << " errors\n";
  CHECK(outcomes[Reader::State::kError] > 0);
  CHECK(outcomes[Reader::State::kComplete] > 0);
}

}  // namespace serve_fuzz_test
