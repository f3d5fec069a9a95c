// The NFQUEUE delay line on a real 2-node cluster: ping (and a UDP socket) from node 0 to
// node 1, whose INPUT rule steers node 0's packets to the queue. Needs root and
// nfnetlink_queue. Rules are added after the DelayLine is built and removed before it
// goes, as its contract asks.
#include <catch2/catch.hpp>

#include <arpa/inet.h>
#include <atomic>
#include <cmath>
#include <filesystem>
#include <netinet/in.h>
#include <optional>
#include <sstream>
#include <string>
#include <sys/socket.h>
#include <thread>
#include <unistd.h>

#include "faults/network/delay_line.h"
#include "common/kernel/netns.h"
#include "harness/cluster/netns_cluster.h"
#include "net_probe.h"
#include "test_util.h"

namespace delay_line_test {  // this file's names, apart in a unity batch (tests/CMakeLists.txt)

using chaosbench::faults::DelayLine;
using chaosbench::faults::DelayLineSettings;
using chaosbench::common::run_in_netns;
using chaosbench::harness::NetnsCluster;
using chaosbench::test::skip_without_root;
using namespace std::chrono_literals;

namespace {

constexpr std::uint16_t kQueue = 7;

std::string unique_run_id() {
  static std::atomic<int> counter{0};
  return "dltest-" + std::to_string(::getpid()) + "-" + std::to_string(counter++);
}

std::vector<std::string> steering_rule(const NetnsCluster& c, const char* action) {
  return {"iptables", "-w", action, "INPUT", "-s", c.address(0), "-j", "NFQUEUE", "--queue-num",
          std::to_string(kQueue), "--queue-bypass"};
}

// Adds the rule on construction, removes it on destruction (before the DelayLine built
// earlier in the same scope goes).
class SteeringRule {
 public:
  explicit SteeringRule(const NetnsCluster& c) : c_(c) {
    auto r = chaosbench::common::run_in_netns(c.node_netns_fd(1), steering_rule(c, "-A"), 5s);
    REQUIRE(r.exit_code == 0);
  }
  ~SteeringRule() { chaosbench::common::run_in_netns(c_.node_netns_fd(1), steering_rule(c_, "-D"), 5s); }

 private:
  const NetnsCluster& c_;
};

using chaosbench::test::PingResult;

// ping from node 0 towards node 1; no Catch2 assertions, so it may run on another thread.
PingResult run_ping(const NetnsCluster& c, int count, const char* interval) {
  return chaosbench::test::ping(c.node_netns_fd(0), c.address(1), count, std::stod(interval));
}

PingResult ping(const NetnsCluster& c, int count, const char* interval) {
  PingResult p = run_ping(c, count, interval);
  INFO(p.output);
  REQUIRE(p.sent == count);
  return p;
}

// The smallest k with P(X <= k) >= q for X ~ Binomial(n, p).
int binomial_quantile(int n, double p, double q) {
  double cdf = 0;
  for (int k = 0; k <= n; ++k) {
    cdf += std::exp(std::lgamma(n + 1.0) - std::lgamma(k + 1.0) - std::lgamma(n - k + 1.0) + k * std::log(p) +
                    (n - k) * std::log1p(-p));
    if (cdf >= q) return k;
  }
  return n;
}

// A counter from /proc/net/snmp as the namespace sees it ("Udp", "InCsumErrors").
long snmp_counter(int netns_fd, const std::string& proto, const std::string& field) {
  auto r = chaosbench::common::run_in_netns(netns_fd, {"cat", "/proc/net/snmp"}, 5s);
  std::istringstream in(r.out);
  std::string names, values;
  while (std::getline(in, names) && std::getline(in, values)) {
    if (names.rfind(proto + ":", 0) != 0) continue;
    std::istringstream n(names), v(values);
    std::string name, value;
    while (n >> name && v >> value)
      if (name == field) return std::stol(value);
  }
  return -1;
}

}  // namespace

TEST_CASE("delay line: a 20 ms delay raises the average ping RTT by 20 ms +/- 10%", "[network]") {
  if (skip_without_root("the delay line needs namespaces and NFQUEUE")) return;
  NetnsCluster c(2, unique_run_id());
  const double baseline = ping(c, 20, "0.05").avg_ms;
  DelayLineSettings s;
  s.delay = 20ms;
  DelayLine line(c.node_netns_fd(1), kQueue, s);
  SteeringRule rule(c);
  auto p = ping(c, 20, "0.05");
  REQUIRE(p.received == 20);
  CHECK(p.avg_ms - baseline == Approx(20.0).epsilon(0.10));
  auto st = line.stats();
  CHECK(st.packets == 20);
  CHECK(st.released == 20);
  CHECK(st.held_mean_us == Approx(20000).epsilon(0.05));
}

TEST_CASE("delay line: 10% loss drops a share of 400 pings inside the binomial 99% interval", "[network]") {
  if (skip_without_root("the delay line needs namespaces and NFQUEUE")) return;
  NetnsCluster c(2, unique_run_id());
  DelayLineSettings s;
  s.loss = 0.1;
  s.seed = 1;  // only the 400 requests pass the queue, so the count is the same every run
  DelayLine line(c.node_netns_fd(1), kQueue, s);
  SteeringRule rule(c);
  auto p = ping(c, 400, "0.01");
  const int lost = p.sent - p.received;
  const int lo = binomial_quantile(400, 0.1, 0.005), hi = binomial_quantile(400, 0.1, 0.995);
  INFO("lost " << lost << " of 400; 99% interval " << lo << ".." << hi);
  CHECK(lost >= lo);
  CHECK(lost <= hi);
  CHECK(line.stats().dropped == static_cast<std::uint64_t>(lost));
}

TEST_CASE("delay line: after the delay line is destroyed the RTT is back to baseline", "[network]") {
  if (skip_without_root("the delay line needs namespaces and NFQUEUE")) return;
  NetnsCluster c(2, unique_run_id());
  const double baseline = ping(c, 20, "0.05").avg_ms;
  {
    DelayLineSettings s;
    s.delay = 10ms;
    DelayLine line(c.node_netns_fd(1), kQueue, s);
    SteeringRule rule(c);
    REQUIRE(ping(c, 5, "0.05").avg_ms > 9.0);
  }
  auto after = ping(c, 20, "0.05");
  CHECK(after.received == 20);
  CHECK(after.avg_ms < baseline + 1.0);
}

TEST_CASE("delay line: destroying it with packets held returns at once and releases them", "[network]") {
  if (skip_without_root("the delay line needs namespaces and NFQUEUE")) return;
  NetnsCluster c(2, unique_run_id());
  PingResult p;
  std::thread pinger;
  DelayLineSettings s;
  s.delay = 3s;
  std::optional<DelayLine> line;
  line.emplace(c.node_netns_fd(1), kQueue, s);
  {
    SteeringRule rule(c);
    pinger = std::thread([&] { p = run_ping(c, 3, "0.1"); });
    std::this_thread::sleep_for(600ms);  // all three requests are held by now
  }
  auto st = line->stats();
  CHECK(st.packets == 3);
  CHECK(st.released == 0);
  const auto start = std::chrono::steady_clock::now();
  line.reset();
  const double destroy_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  pinger.join();
  INFO(p.output);
  CHECK(destroy_ms < 500);
  CHECK(p.received == 3);
  CHECK(p.max_ms < 1500);  // released at destruction (~0.6 s), not after the 3 s delay
}

TEST_CASE("delay line: a second DelayLine on the same queue in the same namespace throws", "[network]") {
  if (skip_without_root("the delay line needs namespaces and NFQUEUE")) return;
  NetnsCluster c(2, unique_run_id());
  DelayLine first(c.node_netns_fd(1), kQueue, DelayLineSettings{});
  try {
    DelayLine second(c.node_netns_fd(1), kQueue, DelayLineSettings{});
    FAIL("the second DelayLine was built");
  } catch (const std::runtime_error& e) {
    INFO(e.what());
    CHECK(std::string(e.what()).find("NFQUEUE 7") != std::string::npos);
  }
  // The same number in another namespace is another queue.
  DelayLine other(c.node_netns_fd(0), kQueue, DelayLineSettings{});
  CHECK(other.queue_num() == kQueue);
}

TEST_CASE("delay line: reorder 1.0 releases every packet at once despite a 50 ms delay", "[network]") {
  if (skip_without_root("the delay line needs namespaces and NFQUEUE")) return;
  NetnsCluster c(2, unique_run_id());
  DelayLineSettings s;
  s.delay = 50ms;
  s.reorder = 1.0;
  DelayLine line(c.node_netns_fd(1), kQueue, s);
  SteeringRule rule(c);
  auto p = ping(c, 10, "0.05");
  CHECK(p.received == 10);
  CHECK(p.max_ms < 10);
  CHECK(line.stats().reordered == 10);
}

TEST_CASE("delay line: corrupted UDP datagrams are discarded by the receiver's checksum", "[network]") {
  if (skip_without_root("the delay line needs namespaces and NFQUEUE")) return;
  NetnsCluster c(2, unique_run_id());
  const long csum_before = snmp_counter(c.node_netns_fd(1), "Udp", "InCsumErrors");
  REQUIRE(csum_before >= 0);
  int rx = -1, tx = -1;
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(40007);
  ::inet_pton(AF_INET, c.address(1).c_str(), &addr.sin_addr);
  NetnsCluster::in_netns(c.node_netns_fd(1), [&] {
    rx = ::socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    REQUIRE(::bind(rx, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0);
  });
  NetnsCluster::in_netns(c.node_netns_fd(0), [&] { tx = ::socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0); });
  DelayLineSettings s;
  s.delay = 1ms;
  s.corrupt = 0.5;
  s.seed = 3;
  const int n = 40;
  {
    DelayLine line(c.node_netns_fd(1), kQueue, s);
    SteeringRule rule(c);
    const std::string payload(200, 'x');
    for (int i = 0; i < n; ++i) {
      REQUIRE(::sendto(tx, payload.data(), payload.size(), 0, reinterpret_cast<sockaddr*>(&addr), sizeof addr) > 0);
      std::this_thread::sleep_for(2ms);
    }
    std::this_thread::sleep_for(100ms);
    auto st = line.stats();
    int received = 0;
    char buf[512];
    while (::recv(rx, buf, sizeof buf, 0) > 0) ++received;
    const long csum_errors = snmp_counter(c.node_netns_fd(1), "Udp", "InCsumErrors") - csum_before;
    INFO("received " << received << ", checksum errors " << csum_errors << ", corrupted " << st.corrupted);
    CHECK(st.corrupted > 0);
    CHECK(csum_errors == static_cast<long>(st.corrupted));
    CHECK(received + csum_errors == n);
  }
  ::close(rx);
  ::close(tx);
}

TEST_CASE("delay line: a failed start throws with the reason and leaves no thread behind", "[network]") {
  auto threads = [] {
    std::size_t n = 0;
    for ([[maybe_unused]] const auto& entry : std::filesystem::directory_iterator("/proc/self/task")) ++n;
    return n;
  };
  const std::size_t before = threads();
  DelayLineSettings bad;
  bad.loss = 2;
  CHECK_THROWS_AS(DelayLine(-1, kQueue, bad), std::invalid_argument);
  // A namespace fd that is not one: setns fails inside the thread, the constructor rethrows.
  CHECK_THROWS_WITH(DelayLine(-1, kQueue, DelayLineSettings{}), Catch::Contains("setns"));
  CHECK(threads() <= before);  // <=: another test's thread may end meanwhile
}

}  // namespace delay_line_test
