// A prometheus probe against Debian's real Prometheus server, started here on 127.0.0.1
// with a temporary storage directory, scraping itself every second.
#include <catch2/catch.hpp>

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <thread>

#include "harness/http/http_client.h"
#include "harness/probes/probe_check.h"
#include "test_util.h"

namespace probe_prometheus_test {  // this file's names, apart in a unity batch (tests/CMakeLists.txt)

using namespace chaosbench::harness;
using namespace chaosbench::harness::probes;
using namespace std::chrono_literals;

namespace {

constexpr const char* kPrometheus = "/usr/bin/prometheus";

// A port the kernel just handed out and took back: free now, very likely free a moment later.
unsigned short free_local_port() {
  int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof addr;
  ::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr);
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len);
  ::close(fd);
  return ntohs(addr.sin_port);
}

// The server as a child process in a process group of its own; SIGTERM, then SIGKILL, on
// destruction, so a failed assertion never leaves it running.
class PrometheusServer {
 public:
  explicit PrometheusServer(const chaosbench::test::TempDir& dir) : port_(free_local_port()) {
    const std::string listen = "127.0.0.1:" + std::to_string(port_);
    dir.write("prometheus.yml", "global:\n  scrape_interval: 1s\n  evaluation_interval: 1s\nscrape_configs:\n"
                                "  - job_name: self\n    static_configs:\n      - targets: ['" + listen + "']\n");
    const std::vector<std::string> args{kPrometheus, "--config.file=" + dir.file("prometheus.yml"),
                                        "--storage.tsdb.path=" + dir.file("data"), "--web.listen-address=" + listen,
                                        "--log.level=warn"};
    const std::string log = dir.file("prometheus.log");
    std::vector<char*> argv;
    for (const auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
    argv.push_back(nullptr);
    pid_ = ::fork();
    if (pid_ == 0) {
      ::setpgid(0, 0);
      int fd = ::open(log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
      ::dup2(fd, 1);
      ::dup2(fd, 2);
      ::execv(kPrometheus, argv.data());
      ::_exit(127);
    }
  }
  ~PrometheusServer() {
    if (pid_ <= 0) return;
    ::kill(-pid_, SIGTERM);
    ::kill(pid_, SIGTERM);
    for (int i = 0; i < 50 && ::waitpid(pid_, nullptr, WNOHANG) == 0; ++i) std::this_thread::sleep_for(100ms);
    if (::waitpid(pid_, nullptr, WNOHANG) == 0) {
      ::kill(-pid_, SIGKILL);
      ::waitpid(pid_, nullptr, 0);
    }
  }
  PrometheusServer(const PrometheusServer&) = delete;
  PrometheusServer& operator=(const PrometheusServer&) = delete;

  std::string url() const { return "http://127.0.0.1:" + std::to_string(port_); }
  // True once /-/ready answers 200 (within `limit`).
  bool wait_ready(std::chrono::seconds limit) const {
    const auto deadline = std::chrono::steady_clock::now() + limit;
    while (std::chrono::steady_clock::now() < deadline) {
      http::Request r;
      r.url = url() + "/-/ready";
      r.timeout = 1s;
      if (http::fetch(r).status == 200) return true;
      std::this_thread::sleep_for(200ms);
    }
    return false;
  }

 private:
  unsigned short port_;
  pid_t pid_ = -1;
};

ProbeOutcome query(const std::string& url, const std::string& promql, std::optional<double> min, std::optional<double> max) {
  ProbeSpec p;
  p.name = "prom";
  p.kind = ProbeKind::kPrometheus;
  p.url = url;
  p.query = promql;
  p.min = min;
  p.max = max;
  p.timeout = chaosbench::common::Duration{2s};
  return make_probe_check(p, {})->evaluate(0);
}

}  // namespace

TEST_CASE("probes: a prometheus probe queries Debian's Prometheus server", "[probes][slow][agents]") {
  if (::access(kPrometheus, X_OK) != 0) {
    WARN("skipped: " << kPrometheus << " is not installed (apt-get install prometheus)");
    return;
  }
  chaosbench::test::TempDir dir;
  PrometheusServer server(dir);
  REQUIRE(server.wait_ready(30s));
  auto o = query(server.url(), "vector(1)", 1, 1);
  CHECK(o.ok);
  CHECK(*o.value == 1);
  CHECK(o.evidence == "vector(1) = 1");
  o = query(server.url(), "scalar(vector(2))", std::nullopt, 1);
  CHECK(!o.ok);
  CHECK(o.evidence == "scalar(vector(2)) = 2 > max 1");
  o = query(server.url(), "vector(1) > 2", 0, std::nullopt);
  CHECK(!o.ok);
  CHECK_THAT(o.evidence, Catch::EndsWith("the query returned no samples (vector(1) > 2)"));
  o = query(server.url(), "sum(", 0, std::nullopt);
  CHECK(!o.ok);
  CHECK_THAT(o.evidence, Catch::Contains("the query failed (bad_data)"));
  // `up` of its own scrape: the first one lands within a second or two.
  const auto deadline = std::chrono::steady_clock::now() + 20s;
  do {
    o = query(server.url(), "up{job=\"self\"}", 1, std::nullopt);
    if (!o.ok) std::this_thread::sleep_for(500ms);
  } while (!o.ok && std::chrono::steady_clock::now() < deadline);
  CHECK(o.ok);
  CHECK_THAT(o.evidence, Catch::Contains("up{job=\"self\"} = 1{__name__=up") && Catch::Contains("job=self"));
}

}  // namespace probe_prometheus_test
