// Outside programs in the namespaced cluster, unmodified: each node has a hostname that
// resolves to its own address and the *_SOCKET_IFNAME variables distributed libraries
// pick their interface by; a real PyTorch DDP job (Debian's python3-torch, gloo) runs,
// is killed and recovers by restart.
#include <catch2/catch.hpp>

#include <filesystem>
#include <sstream>

#include <nlohmann/json.hpp>

#include "harness/cluster/node_identity.h"
#include "results_json.h"
#include "test_util.h"

namespace outside_workload_test {  // this file's names, apart in a unity batch (tests/CMakeLists.txt)

using namespace chaosbench::test;
using namespace std::chrono_literals;
using nlohmann::json;

TEST_CASE("outside workloads: each node has a hostname that resolves to its address, and *_SOCKET_IFNAME",
          "[runner][outside]") {
  if (skip_without_root("network namespaces need root")) return;
  const std::string host_hosts = read_file("/etc/hosts");
  TempDir dir;
  dir.write("who.py",
            "import os, socket\n"
            "name = socket.gethostname()\n"
            "print(name, socket.gethostbyname(name), socket.gethostbyname('node0'), socket.gethostbyname('node1'),\n"
            "      os.environ['GLOO_SOCKET_IFNAME'], os.environ['NCCL_SOCKET_IFNAME'], os.environ['TP_SOCKET_IFNAME'],\n"
            "      os.environ['CHAOSBENCH_NODE_ADDR'], os.getcwd(), flush=True)\n");
  // The scenario's own NCCL_SOCKET_IFNAME wins over the harness's; a relative cwd is the
  // harness's directory's, also inside the node's mount namespace.
  dir.write("s.json", R"({"schema_version": 1, "name": "names", "cluster": {"nodes": 2, "mode": "namespaces"},
    "workload": {"kind": "command", "argv": ["python3", "{scenario_dir}/who.py"], "env": {"NCCL_SOCKET_IFNAME": "=eth0"},
    "cwd": "."}})");
  auto r = run_command({binary(), "run", dir.file("s.json"), "--out", dir.file("out"), "--quiet"}, 60s);
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  for (int node = 0; node < 2; ++node) {
    const auto out = read_file(dir.file("out/logs/rank" + std::to_string(node) + ".out"));
    INFO(out);
    std::istringstream words(out);
    std::string name, own, node0, node1, gloo, nccl, tp, addr, cwd;
    words >> name >> own >> node0 >> node1 >> gloo >> nccl >> tp >> addr >> cwd;
    CHECK(name == "node" + std::to_string(node));
    CHECK(own == addr);  // gethostname() -> address lookups give the node's own address
    CHECK_THAT(own, Catch::StartsWith("10."));
    CHECK((node == 0 ? node0 : node1) == addr);
    CHECK(node0 != node1);
    CHECK(gloo == "eth0");
    CHECK(nccl == "=eth0");
    CHECK(tp == "eth0");
    CHECK(cwd == std::filesystem::current_path().string());
  }
  CHECK(read_file("/etc/hosts") == host_hosts);  // the host's own file is untouched
}

TEST_CASE("outside workloads: a node's nsswitch.conf reads the hosts file first", "[outside]") {
  using chaosbench::harness::NodeIdentity;
  CHECK(NodeIdentity::nsswitch_files_first("passwd: files\nhosts: files dns\n").empty());
  CHECK(NodeIdentity::nsswitch_files_first("passwd: files systemd\n").empty());
  CHECK(NodeIdentity::nsswitch_files_first("passwd: files\nhosts:  resolve [!UNAVAIL=return] files myhostname dns\n") ==
        "passwd: files\nhosts: files dns\n");
  CHECK(NodeIdentity::hosts_file({"10.1.2.1", "10.1.2.2"}).find("10.1.2.2\tnode1\n") != std::string::npos);
}

TEST_CASE("outside workloads: a PyTorch DDP job on 2 namespaced nodes recovers from node.kill by restart",
          "[runner][outside]") {
  if (skip_without_root("network namespaces need root")) return;
  auto torch = run_command({"/usr/bin/python3", "-c", "import torch.distributed"}, 60s);
  INFO("python3-torch for /usr/bin/python3 is needed (scripts/bootstrap.sh installs it): " << torch.err);
  REQUIRE(torch.exit_code == 0);
  TempDir dir;
  auto r = run_command({binary(), "run", source("scenarios/torch-ddp-node-kill.json"), "--out", dir.file("out"),
                        "--quiet"}, 240s);
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  auto res = read_results(dir);
  CHECK(res["verdict"] == "pass");
  CHECK_THAT(res["environment"]["cluster"].get<std::string>(), Catch::StartsWith("network namespaces"));
  CHECK(overall_value(res, "resilience/restarts") == 1);
  const auto recover = overall_value(res, "resilience/time_to_recover");
  REQUIRE(recover);
  CHECK(*recover > 2.0);  // the node is down 2 s
  // Killed at step 170 (the first rank to report it), resumed from the step-150 checkpoint.
  const auto lost = overall_value(res, "resilience/lost_steps");
  REQUIRE(lost);
  CHECK(*lost >= 20);
  CHECK(*lost <= 25);  // the ranks are in lockstep: the kill lands within a step or two
  double sum = *overall_value(res, "resilience/goodput");
  for (const auto& m : metrics_named(res, "resilience/badput")) {
    sum += m["value"].get<double>();
    if (m["labels"]["bucket"] == "wasted_progress") CHECK(m["value"].get<double>() > 0);
  }
  CHECK(sum == Approx(100.0).margin(0.01));
  // Both ranks' second life resumed from the checkpoint, on their nodes' names.
  for (int rank = 0; rank < 2; ++rank)
    CHECK_THAT(read_file(dir.file("out/logs/rank" + std::to_string(rank) + ".restart1.out")),
               Catch::Contains("on node" + std::to_string(rank) + " attempt 1 from step 150"));
}

}  // namespace outside_workload_test
