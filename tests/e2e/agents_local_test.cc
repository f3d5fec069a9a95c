// The agent path on one machine (cluster.mode "local-agents"): real `chaosbench agent`
// processes on loopback, the real link, handshake and records; plus the link's pieces
// that need no processes (the fault's wire form, the handshake's refusals). The same
// path across real sshd hosts is tests/e2e/agents_test.sh.
#include <catch2/catch.hpp>

#include <atomic>
#include <csignal>
#include <filesystem>
#include <fstream>
#include <regex>
#include <set>
#include <fmt/format.h>
#include <nlohmann/json.hpp>
#include <netinet/in.h>
#include <sys/socket.h>
#include <thread>
#include <unistd.h>

#include "harness/agent/agent_hub.h"
#include "harness/agent/fault_wire.h"
#include "harness/agent/link_handshake.h"
#include "results_json.h"
#include "test_util.h"

namespace agents_local_test {  // this file's names, apart in a unity batch (tests/CMakeLists.txt)

using namespace chaosbench;
using namespace chaosbench::test;
using namespace std::chrono_literals;
using nlohmann::json;

namespace {

std::string scenario(const std::string& workload, const std::string& faults = "[]", int nodes = 3) {
  return fmt::format(R"({{"schema_version": 1, "name": "local-agents", "cluster": {{"nodes": {}, "mode": "local-agents",
    "agent": {{"command": "unused", "timeout": "2s"}}}}, "workload": {}, "faults": {}}})",
                     nodes, workload, faults);
}

const char* kCollective =
    R"({"kind": "collective", "collectives": ["allreduce"], "sizes": {"min": "1KiB", "max": "16KiB", "factor": 4}, "iters": 5})";

// Agent runtime directories and journals of run `id` still on this machine.
std::vector<std::string> agent_leftovers(const std::string& id) {
  std::vector<std::string> out;
  for (const auto& dir : {std::string("/tmp"), std::string("/run/chaosbench")}) {
    std::error_code ec;
    for (const auto& e : std::filesystem::directory_iterator(dir, ec))
      if (e.path().filename().string().find(id + "-n") != std::string::npos) out.push_back(e.path().string());
  }
  return out;
}

// The stores the controller told the ranks to meet in (its rendezvous_store event).
std::string rendezvous_stores(const TempDir& dir) {
  std::ifstream in(dir.file("out/timeline.jsonl"));
  for (std::string line; std::getline(in, line);) {
    auto e = json::parse(line);
    if (e.value("event", "") == "rendezvous_store") return e.value("stores", "");
  }
  return "";
}

std::pair<std::unique_ptr<harness::LinkChannel>, std::unique_ptr<harness::LinkChannel>> linked_pair() {
  int fds[2];
  REQUIRE(::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, fds) == 0);
  return {std::make_unique<harness::LinkChannel>(common::UniqueFd(fds[0])),
          std::make_unique<harness::LinkChannel>(common::UniqueFd(fds[1]))};
}

}  // namespace

TEST_CASE("agents: a collective on 3 local agents passes, its records come through them, hosts are listed", "[agents]") {
  TempDir dir;
  dir.write("s.json", scenario(kCollective));
  auto r = run_command({binary(), "run", dir.file("s.json"), "--out", dir.file("out"), "--quiet"}, 120s);
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  auto res = read_results(dir);
  CHECK(res["verdict"] == "pass");
  CHECK(!metrics_named(res, "comm/busbw").empty());
  REQUIRE(res["environment"]["hosts"].size() == 3);
  for (const auto& h : res["environment"]["hosts"]) {
    CHECK(h["address"] == "127.0.0.1");
    // One machine, one clock: the estimate is within its own uncertainty of zero.
    CHECK(std::abs(h["clock_offset_ms"].get<double>()) <= h["clock_uncertainty_ms"].get<double>() + 0.05);
  }
  CHECK(agent_leftovers(res["run_id"].get<std::string>()).empty());
  // Each process record names the host its node ran on.
  for (const auto& p : res["processes"]) CHECK(p["host"] == "node" + std::to_string(p["rank"].get<int>()));
  // The ranks met in the controller's store, not in files.
  CHECK_THAT(rendezvous_stores(dir), Catch::StartsWith("tcp:127.0.0.1:"));
}

TEST_CASE("agents: node.kill with restart_after on a local agent brings the node's ranks back", "[agents]") {
  TempDir dir;
  dir.write("s.json", scenario(R"({"kind": "train", "model": {"layers": [32, 64, 8]}, "batch_size": 128, "steps": 120,
    "checkpoint": {"every_steps": 20}, "recovery": {"mode": "restart", "max_restarts": 2}})",
                               R"([{"name": "down", "type": "node.kill", "target": {"nodes": [1]}, "at_step": 30,
    "restart_after": "500ms"}])"));
  auto r = run_command({binary(), "run", dir.file("s.json"), "--out", dir.file("out"), "--quiet"}, 180s);
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  auto res = read_results(dir);
  auto restarts = metrics_named(res, "resilience/restarts");
  REQUIRE(!restarts.empty());
  CHECK(restarts[0]["value"] == 1);
}

TEST_CASE("agents: elastic training through the controller's store survives node.kill and re-admits the node",
          "[agents]") {
  TempDir dir;
  // Long enough that the killed node is back (0.5 s later) well before the last step.
  dir.write("s.json", scenario(R"({"kind": "train", "model": {"layers": [32, 64, 8]}, "batch_size": 128, "steps": 6000,
    "recovery": {"mode": "elastic"}})",
                               R"([{"name": "down", "type": "node.kill", "target": {"nodes": [2]}, "at_step": 50,
    "restart_after": "500ms"}])"));
  auto r = run_command({binary(), "run", dir.file("s.json"), "--out", dir.file("out"), "--quiet"}, 180s);
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  auto res = read_results(dir);
  CHECK(res["verdict"] == "pass");
  CHECK_THAT(rendezvous_stores(dir), Catch::StartsWith("tcp:127.0.0.1:"));
  std::map<std::string, int> reasons;
  for (const auto& e : workload_events(dir, "out", "train_start")) ++reasons[e["reason"].get<std::string>()];
  CHECK(reasons["fresh"] == 3);
  CHECK(reasons["rejoined"] >= 1);
  CHECK(reasons["resized"] >= 1);
}

TEST_CASE("agents: a network fault on local agents (no traffic between hosts) is refused at setup (exit 3)", "[agents]") {
  TempDir dir;
  dir.write("s.json", scenario(kCollective, R"([{"name": "slow", "type": "network.rate", "target": {"nodes": [1]},
    "rate": "10mbit", "at": "1s", "duration": "1s"}])"));
  auto r = run_command({binary(), "run", dir.file("s.json"), "--out", dir.file("out"), "--quiet"}, 60s);
  INFO(r.err);
  CHECK(r.exit_code == 3);
  CHECK(r.err.find("local agents share this machine's loopback") != std::string::npos);
}

namespace {
std::atomic<int> g_controller{-1};
void remember(int pid) { g_controller = pid; }
}  // namespace

// Agent runtime directories (/tmp/chaosbench-<run>-n<node>) there now.
std::set<std::string> agent_dirs() {
  std::set<std::string> out;
  std::error_code ec;
  for (const auto& e : std::filesystem::directory_iterator("/tmp", ec)) {
    const std::string name = e.path().filename().string();
    // Exactly chaosbench-<12 hex>-n<digits>: a test's own temporary directory
    // (chaosbench-test-XXXXXX) can have "-n" in its random tail.
    static const std::regex agent_dir("chaosbench-[0-9a-f]{12}-n[0-9]+");
    if (std::regex_match(name, agent_dir)) out.insert(name);
  }
  return out;
}

TEST_CASE("agents: a SIGKILLed controller's local agents revert, stop their ranks and remove their state", "[agents]") {
  TempDir dir;
  dir.write("s.json", scenario(R"({"kind": "collective", "collectives": ["allreduce"], "sizes": {"min": "1KiB",
    "max": "1KiB"}, "duration": "60s"})", "[]", 2));
  const auto before = agent_dirs();
  std::set<std::string> during;
  std::thread killer([&] {
    // Once the ranks run (the timeline says so), kill the controller outright.
    for (int i = 0; i < 300; ++i) {
      std::this_thread::sleep_for(50ms);
      if (read_file(dir.file("out/timeline.jsonl")).find("process_started") != std::string::npos) break;
    }
    std::this_thread::sleep_for(500ms);
    for (const auto& d : agent_dirs())
      if (!before.count(d)) during.insert(d);
    if (g_controller > 0) ::kill(g_controller, SIGKILL);
  });
  auto r = run_command({binary(), "run", dir.file("s.json"), "--out", dir.file("out"), "--quiet"}, 60s, remember);
  killer.join();
  CHECK(r.exit_code == -1);
  for (const auto& d : during) UNSCOPED_INFO("new runtime directory while running: " << d);
  REQUIRE(during.size() == 2);  // both agents were there when the controller died
  std::size_t left = during.size();
  for (int i = 0; i < 40 && left > 0; ++i) {  // up to 4 s: the agents clean up at once on SIGTERM
    std::this_thread::sleep_for(100ms);
    const auto now = agent_dirs();
    left = std::count_if(during.begin(), during.end(), [&](const std::string& d) { return now.count(d) > 0; });
  }
  CHECK(left == 0);
  // The controller's own journal and runtime directory are this machine's cleanup's.
  auto c = run_command({binary(), "cleanup"}, 60s);
  CHECK(c.out.find(dir.file("out")) != std::string::npos);
}

TEST_CASE("agents: the fault's wire form keeps every parameter exactly and the target's lists", "[agents]") {
  faults::Params p;
  p.set("delay", faults::Duration{std::chrono::nanoseconds(20'000'123)});
  p.set("rate", faults::Rate{123'456'789'012});
  p.set("limit", faults::Size{1ull << 40});
  p.set("loss", faults::Percent{12.5});
  p.set("count", std::int64_t{-7});
  p.set("cpus", 0.25);
  p.set("signal", std::string("SIGUSR1"));
  p.set("one_way", true);
  const auto back = harness::decode_params(json::parse(harness::encode_params(p).dump()));
  CHECK(back.get<faults::Duration>("delay").value.count() == 20'000'123);
  CHECK(back.get<faults::Rate>("rate").bits_per_second == 123'456'789'012ull);
  CHECK(back.get<faults::Size>("limit").bytes == 1ull << 40);
  CHECK(back.get<faults::Percent>("loss").value == 12.5);
  CHECK(back.get<std::int64_t>("count") == -7);
  CHECK(back.get<double>("cpus") == 0.25);
  CHECK(back.get<std::string>("signal") == "SIGUSR1");
  CHECK(back.get<bool>("one_way"));
  CHECK_THROWS(harness::decode_params(json::parse(R"({"x": {"furlongs": 3}})")));
  CHECK_THROWS(harness::decode_params(json::parse(R"({"x": 3})")));
  faults::ResolvedTarget t;
  t.nodes = {0, 2};
  t.ranks = {1};
  t.links = {{0, 1}};
  t.groups = {{0}, {1, 2}};
  const auto u = harness::decode_target(harness::encode_target(t));
  CHECK(u.nodes == t.nodes);
  CHECK(u.ranks == t.ranks);
  CHECK(u.links == t.links);
  CHECK(u.groups == t.groups);
}

TEST_CASE("agents: the handshake refuses another version, another run and a wrong secret", "[agents]") {
  const std::string secret(64, 'a');
  struct Case {
    std::string agent_version, agent_run, agent_secret, want;
    bool version_mismatch;
  };
  for (const auto& c : {Case{"0.0.9", "run1", secret, "runs chaosbench 0.0.9, the controller 0.1.0", true},
                        Case{"0.1.0", "run2", secret, "belongs to run run2", false},
                        Case{"0.1.0", "run1", std::string(64, 'b'), "proof is wrong", false}}) {
    auto [controller, agent] = linked_pair();
    std::string agent_error;
    std::thread a([&, c] {
      harness::AgentHello h;
      h.version = c.agent_version;
      h.run_id = c.agent_run;
      h.host = "h1";
      h.node = 1;
      try {
        harness::agent_handshake(*agent, c.agent_secret, h, 2000ms);
      } catch (const harness::LinkError& e) {
        agent_error = e.what();
      }
    });
    std::string controller_error;
    bool mismatch = false;
    try {
      harness::controller_handshake(*controller, secret, "run1", "0.1.0", 4, 2000ms);
    } catch (const harness::VersionMismatch& e) {
      controller_error = e.what();
      mismatch = true;
    } catch (const harness::LinkError& e) {
      controller_error = e.what();
    }
    a.join();
    INFO(controller_error << " / " << agent_error);
    CHECK((controller_error + agent_error).find(c.want) != std::string::npos);
    CHECK(mismatch == c.version_mismatch);
  }
}

namespace {

// A raw connection to the hub's port that writes `bytes` and then stays open.
int stranger(int port, const std::string& bytes) {
  auto fd = harness::dial_link("127.0.0.1", port, 2000ms);
  if (!bytes.empty()) (void)!::write(fd.get(), bytes.data(), bytes.size());
  return ::dup(fd.get());
}

}  // namespace

TEST_CASE("agents: strangers at the hub's port neither end nor stall the join, nor crash it later", "[agents]") {
  const std::string secret(64, 'c');
  harness::AgentHub hub("run1", secret, 1, nullptr, 100ms, 2000ms);
  // A silent connection, a hello of another version, a refusal whose reason is a number.
  std::vector<int> fds{stranger(hub.port(), ""),
                       stranger(hub.port(), harness::encode_frame(harness::MessageType::kHello,
                                                                  R"({"version":"9.9.9","run_id":"run1","node":0})")),
                       stranger(hub.port(), harness::encode_frame(harness::MessageType::kRefused, R"({"why":1})"))};
  std::unique_ptr<harness::LinkChannel> agent;
  std::thread real([&] {
    std::this_thread::sleep_for(200ms);
    agent = std::make_unique<harness::LinkChannel>(harness::dial_link("127.0.0.1", hub.port(), 2000ms));
    harness::AgentHello h;
    h.version = CHAOSBENCH_VERSION;
    h.run_id = "run1";
    h.host = "h0";
    h.node = 0;
    harness::agent_handshake(*agent, secret, h, 3000ms);
  });
  const auto t0 = std::chrono::steady_clock::now();
  REQUIRE_NOTHROW(hub.accept_all(5000ms, [] { return std::map<int, std::string>(); }));
  real.join();
  CHECK(std::chrono::steady_clock::now() - t0 < 2s);  // the silent stranger held up nobody
  hub.start(0);
  // After the handshake: a pong of strings, a reply nobody awaits, then an unknown frame type.
  agent->send(harness::MessageType::kPong, R"({"t0":"x","t1":[],"t2":null})");
  agent->send(harness::MessageType::kReply, R"({"id":"x","ok":"yes"})");
  const std::string bad = std::string("\0\0\0\1", 4) + std::string(1, '\x63');
  (void)!::write(agent->fd(), bad.data(), bad.size());
  for (int i = 0; i < 50 && !hub.lost(0); ++i) std::this_thread::sleep_for(20ms);
  CHECK(hub.lost(0));  // the agent is lost; the controller lives on
  for (int fd : fds) ::close(fd);
}

TEST_CASE("agents: cluster.agent.port fixes the links' port and the store's (port + 1), and a port in use is exit 3", "[agents]") {
  // Two free ports side by side, found by binding and releasing.
  int port = 0;
  for (int tries = 0; tries < 20 && port == 0; ++tries) {
    int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    socklen_t len = sizeof(addr);
    ::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr));
    ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len);
    const int p = ntohs(addr.sin_port);
    ::close(fd);
    int next = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in b{};
    b.sin_family = AF_INET;
    b.sin_port = htons(static_cast<std::uint16_t>(p + 1));
    if (p < 65534 && ::bind(next, reinterpret_cast<sockaddr*>(&b), sizeof(b)) == 0) port = p;
    ::close(next);
  }
  REQUIRE(port > 0);
  TempDir dir;
  std::string s = scenario(kCollective, "[]", 2);
  s.replace(s.find(R"("timeout": "2s")"), 15, fmt::format(R"("timeout": "2s", "port": {})", port));
  dir.write("s.json", s);
  auto r = run_command({binary(), "run", dir.file("s.json"), "--out", dir.file("out"), "--quiet"}, 60s);
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  CHECK(read_file(dir.file("out/timeline.jsonl")).find(fmt::format("tcp:127.0.0.1:{}", port + 1)) != std::string::npos);
  // The same port held by someone else: refused before anything starts.
  int holder = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  int one = 1;  // the first run's connections may still be in TIME_WAIT on that port
  ::setsockopt(holder, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
  sockaddr_in h{};
  h.sin_family = AF_INET;
  h.sin_port = htons(static_cast<std::uint16_t>(port));
  REQUIRE(::bind(holder, reinterpret_cast<sockaddr*>(&h), sizeof(h)) == 0);
  REQUIRE(::listen(holder, 1) == 0);
  auto busy = run_command({binary(), "run", dir.file("s.json"), "--out", dir.file("out2"), "--quiet"}, 60s);
  ::close(holder);
  CHECK(busy.exit_code == 3);
  CHECK(busy.err.find(fmt::format("cannot listen for agents on port {}", port)) != std::string::npos);
}

}  // namespace agents_local_test
