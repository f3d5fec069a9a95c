// The link mesh on loopback (three "nodes" at 127.0.0.1 on their own ports: no namespace
// needed), hostile datagrams at its sockets, the node telemetry's parsers, and the
// diagnosis's hostile inputs and its scoring metric. The mesh against ping between real
// namespaces is tests/mesh/ping_agreement.sh.
#include <catch2/catch.hpp>

#include <arpa/inet.h>
#include <chrono>
#include <cmath>
#include <map>
#include <memory>
#include <mutex>
#include <netinet/in.h>
#include <sys/socket.h>
#include <thread>
#include <unistd.h>

#include "harness/derive/diagnosis_derivation.h"
#include "harness/collect/link_mesh.h"
#include "harness/collect/node_telemetry.h"
#include "reports/diagnosis/diagnoser.h"

namespace link_mesh_test {  // this file's names, apart in a unity batch (tests/CMakeLists.txt)

using namespace chaosbench;
using namespace chaosbench::harness;

namespace {

struct Collected {
  std::mutex mu;
  std::vector<bench::Sample> samples;
  void operator()(const bench::Sample& s) {
    std::lock_guard lock(mu);
    samples.push_back(s);
  }
};

void send_to(std::uint16_t port, const std::vector<unsigned char>& bytes) {
  int fd = ::socket(AF_INET, SOCK_DGRAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(port);
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ::sendto(fd, bytes.data(), bytes.size(), 0, reinterpret_cast<sockaddr*>(&a), sizeof a);
  ::close(fd);
}

}  // namespace

TEST_CASE("link mesh: every ordered pair gets round trips and no loss, and forged datagrams change nothing", "[mesh]") {
  Collected got;
  MeshSpec spec;
  spec.rate = 20;
  spec.window = common::Duration{std::chrono::milliseconds(250)};
  std::vector<MeshNode> nodes{{-1, "127.0.0.1", "node0"}, {-1, "127.0.0.1", "node1"}, {-1, "127.0.0.1", "node2"}};
  LinkMesh mesh(nodes, spec, [&](const bench::Sample& s) { got(s); });
  mesh.start();
  std::this_thread::sleep_for(std::chrono::milliseconds(400));
  // Not ours: too short, the right size with the magic but another run's token, garbage.
  std::vector<unsigned char> forged(40, 0);
  forged[0] = 0x43, forged[1] = 0x42, forged[2] = 0x4d, forged[3] = 0x50, forged[4] = 2, forged[7] = 1;
  for (int i = 0; i < 200; ++i) {
    send_to(mesh.port(0), {1, 2, 3});
    send_to(mesh.port(0), forged);
    send_to(mesh.port(1), std::vector<unsigned char>(40, 0xff));
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(1200));
  mesh.stop();
  CHECK(mesh.refused() >= 600);
  CHECK(mesh.probes_sent() > 0);
  CHECK(mesh.echoes_received() + 12 >= mesh.probes_sent());  // the last probes may be in flight
  std::map<std::pair<std::string, std::string>, int> rtts;
  double loss = 0;
  for (const auto& s : got.samples) {
    CHECK(s.rank == -1);
    const auto key = std::make_pair(bench::label_to_string(s.labels.at("src")), bench::label_to_string(s.labels.at("dst")));
    CHECK(key.first != key.second);
    if (s.name == "net/pair_rtt") {
      ++rtts[key];
      CHECK(s.value >= 0);
      CHECK(s.value < 50);  // loopback, even on a busy machine
    }
    if (s.name == "net/pair_loss") loss = std::max(loss, s.value);
  }
  CHECK(rtts.size() == 6);
  CHECK(loss == 0);
}

TEST_CASE("link mesh across agents: each mesh probes from its own node to the others' ports, one token", "[mesh][slow]") {
  // Three meshes of one local node each, as three agents run them: peers are known by the
  // ports their own meshes bound; a mesh with another token is not the run's.
  Collected got;
  MeshSpec spec;
  spec.rate = 20;
  spec.window = common::Duration{std::chrono::milliseconds(250)};
  const std::uint64_t token = 0x1234abcd5678ef01ULL;
  std::vector<std::unique_ptr<LinkMesh>> meshes;
  for (int me = 0; me < 3; ++me) {
    std::vector<MeshNode> nodes;
    for (int i = 0; i < 3; ++i) nodes.push_back({-1, "127.0.0.1", "node" + std::to_string(i), i == me, 0});
    meshes.push_back(std::make_unique<LinkMesh>(nodes, spec, [&](const bench::Sample& s) { got(s); }, token, MeshStamps::kUser));
    CHECK(meshes.back()->token() == token);
  }
  // Another run's mesh, probing node 0's port with its own token.
  std::vector<MeshNode> stranger_nodes{{-1, "127.0.0.1", "node0", false, 0}, {-1, "127.0.0.1", "node1", true, 0}};
  LinkMesh stranger(stranger_nodes, spec, [](const bench::Sample&) {}, token + 1);
  stranger.set_peer_port(0, meshes[0]->port(0));
  for (int me = 0; me < 3; ++me)
    for (int i = 0; i < 3; ++i)
      if (i != me) meshes[static_cast<std::size_t>(me)]->set_peer_port(static_cast<std::size_t>(i), meshes[static_cast<std::size_t>(i)]->port(static_cast<std::size_t>(i)));
  CHECK_THROWS(meshes[0]->set_peer_port(0, 1));  // its own node is bound, not set
  for (auto& m : meshes) m->start();
  stranger.start();
  std::this_thread::sleep_for(std::chrono::milliseconds(2500));  // user stamps: probes begin after 1 s
  stranger.stop();
  for (auto& m : meshes) m->stop();
  CHECK(meshes[0]->refused() > 0);  // the stranger's probes
  CHECK(stranger.echoes_received() == 0);
  std::map<std::pair<std::string, std::string>, int> rtts;
  for (const auto& s : got.samples)
    if (s.name == "net/pair_rtt") ++rtts[{bench::label_to_string(s.labels.at("src")), bench::label_to_string(s.labels.at("dst"))}];
  CHECK(rtts.size() == 6);
  for (const auto& s : got.samples)
    if (s.name == "net/pair_loss") CHECK(s.value == 0);
  CHECK_THROWS_WITH(LinkMesh({{-1, "127.0.0.1", "a", false, 1}, {-1, "127.0.0.1", "b", false, 2}}, spec, [](const bench::Sample&) {}),
                    Catch::Contains("no node of it is local"));
}

TEST_CASE("node telemetry: schedstat and cpu.stat are read, anything else is refused", "[mesh]") {
  NodeTelemetry::ThreadTimes t;
  CHECK(NodeTelemetry::parse_schedstat("123456 7890 12\n", &t));
  CHECK(t.cpu_ns == 123456);
  CHECK(t.wait_ns == 7890);
  CHECK_FALSE(NodeTelemetry::parse_schedstat("", &t));
  CHECK_FALSE(NodeTelemetry::parse_schedstat("x y", &t));
  std::uint64_t ns = 0;
  CHECK(NodeTelemetry::parse_throttled("nr_periods 15\nnr_throttled 15\nthrottled_time 1300062916\n", &ns));
  CHECK(ns == 1300062916);
  CHECK(NodeTelemetry::parse_throttled("usage_usec 5\nnr_throttled 1\nthrottled_usec 250\n", &ns));
  CHECK(ns == 250000);
  CHECK_FALSE(NodeTelemetry::parse_throttled("usage_usec 5\n", &ns));
}

TEST_CASE("diagnosis: hostile series (NaN, huge and negative times, absurd ranks) end at once and name nothing", "[diagnosis]") {
  using reports::Series;
  std::vector<Series> series;
  Series rtt{"net/pair_rtt", "ms", {{"src", std::string("node0")}, {"dst", std::string("node1")}}, {}, {}};
  for (double t : {std::nan(""), 1.7e12, -1.7e12, HUGE_VAL, 1.0, 2.0, 1e7 - 1}) rtt.t.push_back(t), rtt.v.push_back(0.05);
  rtt.v.back() = std::nan("");
  series.push_back(rtt);
  for (double rank : {1e300, -5.0, std::nan("")}) {
    Series c{"train/compute_time", "ms", {{"rank", rank}}, {0, 1, 2}, {1, 2, 3}};
    series.push_back(c);
  }
  Series weird{"net/pair_loss", "%", {{"src", std::int64_t{3}}, {"dst", std::int64_t{3}}}, {1, 2}, {100, 100}};
  series.push_back(weird);
  const auto start = std::chrono::steady_clock::now();
  auto d = reports::diagnose_series(series, {});
  CHECK(std::chrono::steady_clock::now() - start < std::chrono::seconds(5));
  CHECK(d.culprits.empty());
}

TEST_CASE("diagnosis: time to localise runs from the first applied fault to the first naming after it", "[diagnosis]") {
  std::vector<reports::FaultRecord> faults(2);
  faults[0].type = "marker", faults[0].applied_at_s = 1.0;
  faults[1].type = "network.delay", faults[1].applied_at_s = 12.0;
  std::vector<reports::EventRecord> events{{5.0, -1, "diagnosis_named", {}}, {17.5, -1, "diagnosis_named", {}},
                                           {19.0, -1, "diagnosis_named", {}}, {13.0, 2, "diagnosis_named", {}}};
  auto m = diagnosis_metrics(events, faults, true);
  REQUIRE(m.size() == 1);
  CHECK(m[0].name == "diagnosis/time_to_localise");
  CHECK(m[0].value == Approx(5.5));
  CHECK(diagnosis_metrics(events, {}, true).empty());
  CHECK(diagnosis_metrics(events, faults, false).empty());
}

}  // namespace link_mesh_test
