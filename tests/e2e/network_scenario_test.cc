// The network fault scenarios end to end through `chaosbench run`: the acceptance
// scenario (4 nodes, network.delay 5ms on node 1 for 10 s), the same file on each backend,
// and nothing of the run left afterwards. Root; serial with the other [network] cases.
#include <catch2/catch.hpp>

#include <cstdio>
#include <filesystem>
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "faults/network/network_plane.h"
#include "net_probe.h"
#include "results_json.h"
#include "test_util.h"
#include "timing_attempts.h"

namespace network_scenario_test {  // this file's names, apart in a unity batch (tests/CMakeLists.txt)

using namespace chaosbench::test;
using nlohmann::json;

namespace {


// p50 of comm/latency for `bytes` in `phase`, in microseconds; -1 when absent.
double latency_p50(const json& r, const std::string& phase, int bytes) {
  for (const auto& m : r["metrics"])
    if (m["name"] == "comm/latency" && m["labels"]["phase"] == phase && m["labels"]["bytes"] == bytes)
      return m["stats"]["p50"].get<double>();
  return -1;
}

}  // namespace

TEST_CASE("network.delay 5ms on node 1: small-message latency rises >= 10 ms in the window, then recovers",
          "[network]") {
  if (skip_without_root("network namespaces and iptables need root")) return;
  // The recovery bracket compares two 6 s phases of a CPU-bound ring on two shared cores:
  // a run whose only misses are timing is run again, up to three runs (timing_attempts.h).
  within_timing_attempts(3, [](int attempt) {
    TempDir dir;
    auto r = run_command({binary(), "run", source("scenarios/network-delay.json"), "--out", dir.file("out"), "--quiet"},
                         std::chrono::seconds(90));
    INFO(r.out << r.err);
    REQUIRE((r.exit_code == 0 || r.exit_code == 1));  // 1: one of the scenario's checks failed
    auto res = read_results(dir, "out");
    const std::string backend = chaosbench::faults::NetworkPlane::netem_available() ? "netem" : "nfqueue";
    CHECK(res["faults"][0]["backend"] == backend);
    CHECK(res["environment"]["backends"]["network.delay"] == backend);
    CHECK(overall_value(res, "comm/wrong_elements") == 0.0);
    const double base = latency_p50(res, "baseline", 4096), during = latency_p50(res, "fault:slow-link", 4096),
                 after = latency_p50(res, "recovery:slow-link", 4096);
    UNSCOPED_INFO(fmt::format("run {}: 4KiB p50: baseline {:.0f} us, window {:.0f} us, after {:.0f} us", attempt, base,
                              during, after));
    REQUIRE(base > 0);
    TimingMisses m;
    bracket(m, r.exit_code == 0, "the scenario's checks (exit code)", r.exit_code, "0");
    bracket(m, during - base >= 10'000, "window minus baseline, 4KiB p50 us", during - base, ">= 10000");
    bracket(m, after <= base * 1.2, "after the window, 4KiB p50 us", after,
            fmt::format("<= {:.0f} (baseline + 20 %)", base * 1.2));
    return m;
  });
}

TEST_CASE("the same scenario runs on a forced backend, and a missing one is refused before anything starts",
          "[network]") {
  if (skip_without_root("network namespaces and iptables need root")) return;
  TempDir dir;
  const std::vector<std::string> shorter{"--set", "workload.duration=3s", "--set", "faults.0.at=1s",
                                         "--set", "faults.0.duration=1s"};
  auto run = [&](const std::string& backend, const std::string& out) {
    std::vector<std::string> argv{binary(), "run", source("scenarios/network-delay.json"), "--out", dir.file(out),
                                  "--quiet", "--set", "faults.0.backend=" + backend};
    argv.insert(argv.end(), shorter.begin(), shorter.end());
    return run_command(argv, std::chrono::seconds(60));
  };
  auto forced = run("nfqueue", "nfq");
  INFO(forced.out << forced.err);
  // The latency check of the full scenario needs its 10 s window; only the backend counts.
  CHECK((forced.exit_code == 0 || forced.exit_code == 1));
  CHECK(read_results(dir, "nfq")["faults"][0]["backend"] == "nfqueue");
  std::string why;
  if (chaosbench::faults::NetworkPlane::netem_available(&why)) {
    auto netem = run("netem", "netem");
    CHECK(read_results(dir, "netem")["faults"][0]["backend"] == "netem");
  } else {
    auto netem = run("netem", "netem");
    CHECK(netem.exit_code == 3);
    CHECK_THAT(netem.err, Catch::Contains("netem"));
    CHECK_FALSE(std::filesystem::exists(dir.file("netem")));  // nothing was made
    auto v = run_command({binary(), "validate", source("scenarios/network-delay.json"), "--set", "faults.0.backend=netem"},
                         std::chrono::seconds(10));
    CHECK(v.exit_code == 3);
    CHECK(run_command({binary(), "validate", "--portable", source("scenarios/network-delay.json"), "--set",
                       "faults.0.backend=netem"},
                      std::chrono::seconds(10))
              .exit_code == 0);
  }
}

TEST_CASE("cluster.link: a one-way delay on every node's link, for the whole run", "[network]") {
  if (skip_without_root("network namespaces and iptables need root")) return;
  TempDir dir;
  dir.write("s.json", R"({"schema_version": 1, "name": "link", "cluster": {"nodes": 2, "link": {"rate": "100mbit", "delay": "5ms"}},
    "workload": {"kind": "command", "nodes": [0], "argv": ["ping", "-n", "-q", "-i", "0.05", "-c", "10", "{node.1.addr}"]}})");
  auto r = run_command({binary(), "run", dir.file("s.json"), "--out", dir.file("out"), "--quiet"}, std::chrono::seconds(30));
  INFO(r.out << r.err);
  REQUIRE(r.exit_code == 0);
  const auto ping = parse_ping(read_file(dir.file("out/logs/rank0.out")));
  INFO(ping.output);
  CHECK(ping.avg_ms == Approx(10.0).epsilon(0.10));  // 5 ms each way
  CHECK(read_file(dir.file("out/timeline.jsonl")).find("\"link_shaped\"") != std::string::npos);
}

}  // namespace network_scenario_test
