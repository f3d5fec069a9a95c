// Scraping during a real run: a serve replica's /metrics (from its node's network
// namespace) and a prometheus-node-exporter the test starts on loopback; the scraped
// series reach results.json with phases, checks and report.html. And the scraper alone
// against a serve worker that goes away: up, then down once.
#include <catch2/catch.hpp>

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fstream>
#include <mutex>
#include <set>
#include <thread>

#include "harness/http/http_client.h"
#include "harness/prometheus/scraper.h"
#include "results_json.h"
#include "serve_process.h"
#include "test_util.h"

namespace scrape_run_test {  // this file's names, apart in a unity batch (tests/CMakeLists.txt)

using namespace chaosbench::test;
using namespace std::chrono_literals;
namespace prom = chaosbench::harness::prometheus;

namespace {

constexpr const char* kNodeExporter = "/usr/bin/prometheus-node-exporter";

int free_loopback_port() {
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof(a);
  ::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof(a));
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len);
  ::close(fd);
  return ntohs(a.sin_port);
}

// prometheus-node-exporter on 127.0.0.1 with three light collectors; SIGKILLed and
// reaped on scope exit, also when an assertion fails.
class NodeExporter {
 public:
  NodeExporter() : port_(free_loopback_port()) {
    pid_ = ::fork();
    if (pid_ == 0) {
      const int null = ::open("/dev/null", O_WRONLY);
      ::dup2(null, 1);
      ::dup2(null, 2);
      const std::string listen = "--web.listen-address=127.0.0.1:" + std::to_string(port_);
      ::execl(kNodeExporter, kNodeExporter, listen.c_str(), "--collector.disable-defaults", "--collector.loadavg",
              "--collector.meminfo", "--collector.cpu", "--web.disable-exporter-metrics", nullptr);
      ::_exit(127);
    }
    for (int i = 0; i < 100; ++i) {  // up to 5 s
      chaosbench::harness::http::Request r;
      r.url = url();
      if (chaosbench::harness::http::fetch(r).status == 200) return;
      std::this_thread::sleep_for(50ms);
    }
  }
  ~NodeExporter() {
    ::kill(pid_, SIGKILL);
    ::waitpid(pid_, nullptr, 0);
  }
  std::string url() const { return "http://127.0.0.1:" + std::to_string(port_) + "/metrics"; }

 private:
  int port_;
  pid_t pid_ = -1;
};

std::set<std::string> phases_of(const nlohmann::json& results, const std::string& name) {
  std::set<std::string> out;
  for (const auto& m : metrics_named(results, name)) out.insert(m["labels"]["phase"].get<std::string>());
  return out;
}

}  // namespace

TEST_CASE("scrape: a run scrapes a serve replica and node-exporter into phases, checks and report.html", "[scrape-run]") {
  if (skip_without_root("a namespaced serve cluster needs root")) return;
  if (::access(kNodeExporter, X_OK) != 0) {
    WARN("skipped: prometheus-node-exporter is not installed (apt-get install prometheus-node-exporter)");
    return;
  }
  NodeExporter exporter;
  TempDir dir;
  dir.write("s.json", R"({"schema_version": 1, "name": "scrape-test", "cluster": {"nodes": 3, "mode": "namespaces"},
    "workload": {"kind": "serve", "model": {"layers": [64, 256, 8]}, "port": 18600,
                 "batching": {"max_batch_size": 32, "max_queue_delay": "1ms"},
                 "load": {"scenario": "server", "qps": 200, "duration": "6s", "timeout": "300ms"}},
    "faults": [{"name": "slow", "type": "network.delay", "target": {"nodes": [0]}, "at": "2s", "duration": "2s",
                "delay": "5ms"}],
    "scrape": [
      {"url": "http://{node.0.addr}:18600/metrics", "every": "250ms", "node": 0},
      {"url": ")" + exporter.url() + R"(", "every": "250ms",
       "metrics": ["node_load1", "/node_cpu_seconds_total|node_memory_MemAvailable_bytes/"],
       "rename": {"node_load1": "node/load1"}}],
    "checks": [{"metric": "chaosbench_infer_requests_total:rate", "labels": {"code": "200"}, "min": 1},
               {"metric": "scrape/up", "min": 0.99}]})");
  auto r = run_command({binary(), "run", dir.file("s.json"), "--out", dir.file("out"), "--quiet"}, 60s);
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  auto res = read_results(dir);
  CHECK(res["verdict"] == "pass");
  const std::set<std::string> all{"baseline", "fault:slow", "recovery:slow", "overall"};
  CHECK(phases_of(res, "chaosbench_infer_requests_total:rate") == all);
  CHECK(phases_of(res, "chaosbench_infer_request_duration_seconds:p99") == all);
  CHECK(phases_of(res, "node_cpu_seconds_total:rate") == all);
  CHECK(phases_of(res, "node/load1") == all);
  CHECK(overall_value(res, "node_memory_MemAvailable_bytes").value_or(0) > 0);
  CHECK(metrics_named(res, "node_load5").empty());  // not in "metrics"
  auto rate = overall_value(res, "chaosbench_infer_requests_total:rate");
  REQUIRE(rate);
  CHECK(*rate > 50);  // one replica of two takes about half of 200 requests/s
  CHECK(*rate < 200);
  for (const auto& c : res["checks"]) CHECK(c["status"] == "pass");
  const std::string html = read_file(dir.file("out/report.html"));
  CHECK(html.find("chaosbench_infer_requests_total:rate") != std::string::npos);
  CHECK(html.find("node/load1") != std::string::npos);
  const std::string timeline = read_file(dir.file("out/timeline.jsonl"));
  CHECK(timeline.find("\"scrape_up\"") != std::string::npos);
  CHECK(timeline.find("\"scrape_down\"") == std::string::npos);
}

TEST_CASE("scrape: a target that goes away is down once, with its failures counted", "[scrape]") {
  auto server = std::make_unique<ServeProcess>();
  std::mutex mutex;
  std::vector<std::pair<bool, std::uint64_t>> states;
  std::size_t samples = 0, up_zero = 0;
  prom::ScrapeTarget t;
  t.url = "http://127.0.0.1:" + std::to_string(server->port()) + "/metrics";
  t.spec.url = t.url;
  t.spec.every = chaosbench::common::Duration{100ms};
  t.spec.timeout = chaosbench::common::Duration{100ms};
  t.instance = prom::instance_of(t.url);
  prom::ScrapeHooks hooks;
  hooks.sample = [&](const chaosbench::bench::Sample& s) {
    std::lock_guard lock(mutex);
    ++samples;
    up_zero += s.name == "scrape/up" && s.value == 0;
  };
  hooks.state = [&](const prom::ScrapeTarget&, bool up, const std::string&, std::uint64_t failures) {
    std::lock_guard lock(mutex);
    states.emplace_back(up, failures);
  };
  prom::Scraper scraper({t}, hooks);
  scraper.start();
  std::this_thread::sleep_for(450ms);
  server.reset();
  std::this_thread::sleep_for(450ms);
  scraper.stop();
  const auto stats = scraper.stats();
  std::lock_guard lock(mutex);
  REQUIRE(states.size() == 2);
  CHECK(states[0] == std::pair<bool, std::uint64_t>{true, 0});
  CHECK_FALSE(states[1].first);
  CHECK(stats[0].failures >= 3);
  CHECK(up_zero == stats[0].failures);
  CHECK(samples > 10);
}

}  // namespace scrape_run_test
