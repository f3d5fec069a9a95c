// http and prometheus probes against real servers over real sockets: a stub server in
// this namespace and in a namespace of its own (the probe reaching it from there).
#include <catch2/catch.hpp>

#include <unistd.h>

#include <cstdio>

#include "common/kernel/netns.h"
#include "harness/probes/probe_check.h"
#include "stub_http_server.h"
#include "test_util.h"

namespace probe_http_test {  // this file's names, apart in a unity batch (tests/CMakeLists.txt)

using namespace chaosbench::harness;
using namespace chaosbench::harness::probes;
using chaosbench::test::StubAnswer;
using chaosbench::test::StubHttpServer;
using namespace std::chrono_literals;

namespace {

ProbeSpec http_probe(const std::string& url) {
  ProbeSpec p;
  p.name = "h";
  p.kind = ProbeKind::kHttp;
  p.url = url;
  p.timeout = chaosbench::common::Duration{1s};
  return p;
}

// A port as /proc/net/tcp shows it: four upper-case hex digits.
std::string hex_port(unsigned short port) {
  char text[8];
  std::snprintf(text, sizeof text, "%04X", port);
  return text;
}

ProbeContext loopback_context() {
  ProbeContext ctx;
  ctx.address = [](int) { return std::string("127.0.0.1"); };
  return ctx;
}

}  // namespace

TEST_CASE("probes: an http probe checks a real server's status and JSON field", "[probes]") {
  StubHttpServer server([](const std::string& target) {
    if (target == "/ready") return StubAnswer{200, R"({"data": {"ready": true, "queue": 4}})"};
    if (target == "/slow") return StubAnswer{200, "{}", "application/json", 3s};
    return StubAnswer{503, R"({"error": "warming up"})"};
  });
  const std::string base = "http://{node.0.addr}:" + std::to_string(server.port());
  auto p = http_probe(base + "/ready");
  auto o = make_probe_check(p, loopback_context())->evaluate(0);
  CHECK(o.ok);
  CHECK(o.evidence == "GET http://127.0.0.1:" + std::to_string(server.port()) + "/ready: status 200");
  p.json_field = "/data/queue";
  p.max = 3;
  o = make_probe_check(p, loopback_context())->evaluate(0);
  CHECK(!o.ok);
  CHECK_THAT(o.evidence, Catch::EndsWith("/ready: /data/queue is 4 > max 3"));
  o = make_probe_check(http_probe(base + "/starting"), loopback_context())->evaluate(0);
  CHECK(!o.ok);
  CHECK_THAT(o.evidence, Catch::EndsWith("/starting: status 503 (expected 2xx)"));
  const auto start = std::chrono::steady_clock::now();
  o = make_probe_check(http_probe(base + "/slow"), loopback_context())->evaluate(0);
  CHECK(std::chrono::steady_clock::now() - start < 2500ms);  // the 1 s timeout, with room
  CHECK(!o.ok);
  CHECK_THAT(o.evidence, Catch::Contains("/slow: ") && Catch::Contains("timed out"));
  CHECK(server.targets().size() == 4);
}

TEST_CASE("probes: an http probe of a closed port fails with the reason", "[probes]") {
  unsigned short port = 0;
  {
    StubHttpServer gone([](const std::string&) { return StubAnswer{}; });
    port = gone.port();
  }
  auto o = make_probe_check(http_probe("http://127.0.0.1:" + std::to_string(port) + "/"), {})->evaluate(0);
  CHECK(!o.ok);
  CHECK_THAT(o.evidence, Catch::Contains("onnect"));
}

TEST_CASE("probes: a prometheus probe reads a stub server's answers and errors", "[probes]") {
  StubHttpServer server([](const std::string& target) {
    if (target.find("query=bad") != std::string::npos)
      return StubAnswer{400, R"({"status":"error","errorType":"bad_data","error":"invalid parameter \"query\""})"};
    if (target.find("query=absent") != std::string::npos)
      return StubAnswer{200, R"({"status":"success","data":{"resultType":"vector","result":[]}})"};
    if (target.find("query=down") != std::string::npos) return StubAnswer{503, "Service Unavailable", "text/plain"};
    return StubAnswer{200, R"({"status":"success","data":{"resultType":"vector","result":[{"metric":{},"value":[1,"0.25"]}]}})"};
  });
  ProbeSpec p;
  p.name = "p";
  p.kind = ProbeKind::kPrometheus;
  p.url = "http://127.0.0.1:" + std::to_string(server.port()) + "/";
  p.max = 0.5;
  auto run = [&](const std::string& query) {
    p.query = query;
    return make_probe_check(p, {})->evaluate(0);
  };
  auto o = run("rate(errors[1m])");
  CHECK(o.ok);
  CHECK(*o.value == 0.25);
  CHECK(o.evidence == "rate(errors[1m]) = 0.25");
  CHECK(server.targets().back() == "/api/v1/query?query=rate%28errors%5B1m%5D%29");
  CHECK_THAT(run("bad").evidence, Catch::EndsWith("/api/v1/query: the query failed (bad_data): invalid parameter \"query\""));
  CHECK_THAT(run("absent").evidence, Catch::EndsWith("the query returned no samples (absent)"));
  CHECK_THAT(run("down").evidence, Catch::EndsWith("status 503, not a Prometheus API answer (not valid JSON)"));
}

TEST_CASE("probes: http and command probes reach a node from its network namespace", "[probes][netns]") {
  if (chaosbench::test::skip_without_root("a network namespace needs root")) return;
  const int ns = chaosbench::common::new_netns();
  struct Closer {
    int fd;
    ~Closer() { ::close(fd); }
  } closer{ns};
  auto up = chaosbench::common::run_in_netns(ns, {"ip", "link", "set", "lo", "up"}, 5s);
  if (up.exit_code != 0) {
    WARN("skipped: cannot bring up the namespace's loopback (ip link): " << up.err);
    return;
  }
  StubHttpServer inside([](const std::string&) { return StubAnswer{200, R"({"where": "inside"})"}; }, ns);
  ProbeContext ctx = loopback_context();
  ctx.netns_fd = [ns](int node) { return node == 1 ? ns : -1; };
  auto p = http_probe("http://{node.1.addr}:" + std::to_string(inside.port()) + "/");
  p.json_field = "/where";
  p.equals = "inside";
  p.node = 1;
  auto o = make_probe_check(p, ctx)->evaluate(0);
  CHECK(o.ok);
  CHECK_THAT(o.evidence, Catch::EndsWith("/where is \"inside\""));
  // The same URL from this process's namespace finds nothing there.
  p.node = -1;
  CHECK(!make_probe_check(p, ctx)->evaluate(0).ok);
  // A command probe runs in the node's namespace too: only there is the server's port open.
  ProbeSpec c;
  c.name = "c";
  c.kind = ProbeKind::kCommand;
  c.timeout = chaosbench::common::Duration{2s};
  c.node = 1;
  c.argv = {"sh", "-c", "grep -q ':" + hex_port(inside.port()) + " ' /proc/net/tcp"};
  CHECK(make_probe_check(c, ctx)->evaluate(0).ok);
  c.node = -1;
  CHECK(!make_probe_check(c, ctx)->evaluate(0).ok);
}

}  // namespace probe_http_test
