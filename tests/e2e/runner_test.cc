// The runner end to end, through the real binary: real processes, real gloo, the wire
// protocol, the fault timeline, signals.
#include <catch2/catch.hpp>

#include <csignal>
#include <nlohmann/json.hpp>
#include <thread>
#include <unistd.h>

#include "results_json.h"
#include "test_util.h"

namespace runner_test {  // this file's names, apart in a unity batch (tests/CMakeLists.txt)

using namespace chaosbench::test;
using namespace std::chrono_literals;
using nlohmann::json;

namespace {

bool alive(long pid) { return ::kill(static_cast<pid_t>(pid), 0) == 0; }

}  // namespace

TEST_CASE("runner: 4-rank collective sweep gives busbw = algbw x 2(n-1)/n and no wrong elements", "[runner]") {
  TempDir dir;
  // The scenario exactly as shipped: 1 KiB to 16 MiB (x4), 10 timed iterations.
  auto r = run_command({binary(), "run", source("scenarios/collective-sweep.json"), "--out", dir.file("out"), "--quiet"},
                       120s);
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  auto res = read_results(dir);
  CHECK(res["schema_version"] == 1);
  CHECK(res["verdict"] == "pass");
  CHECK(res["tool"]["name"] == "chaosbench");
  auto algbw = metrics_named(res, "comm/algbw");
  auto busbw = metrics_named(res, "comm/busbw");
  REQUIRE(!busbw.empty());
  std::size_t allreduce = 0;
  for (const auto& b : busbw) {
    const auto& labels = b["labels"];
    CHECK(labels.contains("phase"));
    CHECK(labels.contains("bytes"));
    CHECK(b["unit"] == "GB/s");
    // The algbw record with exactly the same labels.
    const json* a = nullptr;
    for (const auto& x : algbw)
      if (x["labels"] == labels) a = &x;
    REQUIRE(a != nullptr);
    if (labels["collective"] == "allreduce") {
      ++allreduce;
      CHECK(b["value"].get<double>() == Approx((*a)["value"].get<double>() * 2.0 * 3 / 4).epsilon(1e-12));
    }
  }
  CHECK(allreduce == 2 * 8 * 2);  // ring + halving_doubling, 8 sizes (1KiB..16MiB x4), baseline + overall
  for (const auto& w : metrics_named(res, "comm/wrong_elements")) CHECK(w["value"] == 0);
  auto lat = metrics_named(res, "comm/latency");
  REQUIRE(!lat.empty());
  CHECK(lat[0]["stats"]["n"] == 10 * 4);  // iterations x ranks, pooled
  CHECK(lat[0]["stats"]["p99"].get<double>() >= lat[0]["stats"]["p50"].get<double>());
  CHECK(!metrics_named(res, "comm/avg_busbw").empty());
  CHECK(!metrics_named(res, "comm/iter_cv").empty());
  CHECK(res["processes"].size() == 4);
  for (const auto& p : res["processes"]) CHECK(p["exit_code"] == 0);
  CHECK(read_file(dir.file("out/timeline.jsonl")).find("\"run_finished\"") != std::string::npos);
}

TEST_CASE("runner: a command workload gets the distributed environment and its metrics land in results", "[runner]") {
  TempDir dir;
  dir.write("env.sh",
            "#!/bin/sh\n"
            "echo \"$CHAOSBENCH_RANK $CHAOSBENCH_WORLD_SIZE $CHAOSBENCH_LOCAL_RANK $CHAOSBENCH_NODE $RANK $WORLD_SIZE "
            "$LOCAL_RANK $MASTER_ADDR $MASTER_PORT $1\"\n"
            "python3 - <<'EOF'\n"
            "import json, os, socket, time\n"
            "s = socket.socket(socket.AF_UNIX); s.connect(os.environ['CHAOSBENCH_METRICS'][5:])\n"
            "r = int(os.environ['CHAOSBENCH_RANK'])\n"
            "s.sendall((json.dumps({'type':'sample','rank':r,'time':time.time(),'name':'test/value','value':r+1,'unit':'x'})+'\\n').encode())\n"
            "s.sendall(b'this is not json\\n')\n"
            "EOF\n");
  dir.write("s.json", R"({"schema_version": 1, "name": "env", "cluster": {"nodes": 2, "ranks_per_node": 2, "mode": "local"},
    "workload": {"kind": "command", "argv": ["/bin/sh", "{scenario_dir}/env.sh", "{node.1.addr}"], "master_port": 29999},
    "checks": [{"metric": "test/value", "min": 1, "max": 4}]})");
  auto r = run_command({binary(), "run", dir.file("s.json"), "--out", dir.file("out"), "--quiet"}, 60s);
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  CHECK(read_file(dir.file("out/logs/rank0.out")) == "0 4 0 0 0 4 0 127.0.0.1 29999 127.0.0.1\n");
  CHECK(read_file(dir.file("out/logs/rank3.out")) == "3 4 1 1 3 4 1 127.0.0.1 29999 127.0.0.1\n");
  auto res = read_results(dir);
  auto values = metrics_named(res, "test/value");
  REQUIRE(!values.empty());
  bool overall = false;
  for (const auto& v : values) {
    if (v["labels"]["phase"] != "overall") continue;
    overall = true;
    CHECK(v["value"].get<double>() == Approx(2.5));  // ranks report 1..4, pooled mean
    CHECK(v["stats"]["n"] == 4);
    CHECK(v["unit"] == "x");
  }
  CHECK(overall);
  CHECK(res["protocol"]["malformed"] == 4);
  CHECK(res["series"].size() == 4);
  CHECK(res["checks"].size() == 2);
}

TEST_CASE("runner: the fault timeline fires at, at_step, duration and repeat", "[runner]") {
  TempDir dir;
  dir.write("steps.py",
            "import json, os, socket, time\n"
            "s = socket.socket(socket.AF_UNIX); s.connect(os.environ['CHAOSBENCH_METRICS'][5:])\n"
            "for step in range(1, 31):\n"
            "    time.sleep(0.05)\n"
            "    s.sendall((json.dumps({'type':'event','rank':0,'time':time.time(),'name':'step','fields':{'step':step}})+'\\n').encode())\n"
            "    s.sendall((json.dumps({'type':'sample','rank':0,'time':time.time(),'name':'test/step','value':step})+'\\n').encode())\n");
  dir.write("s.json", R"({"schema_version": 1, "name": "timeline",
    "workload": {"kind": "command", "argv": ["python3", "{scenario_dir}/steps.py"]},
    "faults": [
      {"name": "timed", "type": "marker", "at": "200ms", "duration": "100ms", "repeat": {"every": "300ms", "count": 3}},
      {"name": "stepped", "type": "marker", "at_step": 20, "duration": "100ms"}]})");
  auto r = run_command({binary(), "run", dir.file("s.json"), "--out", dir.file("out"), "--quiet"}, 60s);
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  auto res = read_results(dir);
  REQUIRE(res["faults"].size() == 4);
  for (int k = 0; k < 3; ++k) {
    const auto& f = res["faults"][k];
    CHECK(f["name"] == "timed");
    CHECK(f["occurrence"] == k + 1);
    CHECK(f["applied_at_s"].get<double>() == Approx(0.2 + 0.3 * k).margin(0.05));
    CHECK(f["reverted_at_s"].get<double>() - f["applied_at_s"].get<double>() == Approx(0.1).margin(0.05));
  }
  const auto& stepped = res["faults"][3];
  CHECK(stepped["applied_at_s"].is_number());
  std::vector<std::string> phases;
  for (const auto& p : res["phases"]) phases.push_back(p["name"]);
  CHECK(std::count(phases.begin(), phases.end(), "fault:timed") == 3);
  CHECK(std::count(phases.begin(), phases.end(), "fault:stepped") == 1);
  CHECK(phases.front() == "baseline");
  // Samples landed in the stepped window: steps 20.. reported while it was active.
  bool in_window = false;
  for (const auto& m : metrics_named(res, "test/step"))
    if (m["labels"]["phase"] == "fault:stepped") in_window = m["stats"]["min"].get<double>() >= 20;
  CHECK(in_window);
}

TEST_CASE("runner: a failing rank fails the run and its peers are stopped", "[runner]") {
  TempDir dir;
  dir.write("s.json", R"({"schema_version": 1, "name": "fails", "cluster": {"nodes": 3},
    "workload": {"kind": "command", "argv": ["/bin/sh", "-c", "if [ $RANK = 1 ]; then exit 7; fi; sleep 60"]}})");
  auto r = run_command({binary(), "run", dir.file("s.json"), "--out", dir.file("out"), "--quiet"}, 60s);
  CHECK(r.exit_code == 1);
  CHECK(r.seconds < 20);
  auto res = read_results(dir);
  CHECK(res["verdict"] == "fail");
  CHECK_THAT(res["reason"].get<std::string>(), Catch::Contains("rank 1 exited with code 7"));
  for (const auto& p : res["processes"]) CHECK_FALSE(alive(p["pid"].get<long>()));
}

TEST_CASE("runner: the run timeout stops everything and fails", "[runner]") {
  TempDir dir;
  dir.write("s.json", R"({"schema_version": 1, "name": "slow", "timeout": "1s",
    "workload": {"kind": "command", "argv": ["sleep", "60"]}})");
  auto r = run_command({binary(), "run", dir.file("s.json"), "--out", dir.file("out"), "--quiet"}, 60s);
  CHECK(r.exit_code == 1);
  CHECK(r.seconds < 10);
  CHECK_THAT(read_results(dir)["reason"].get<std::string>(), Catch::Contains("timeout"));
}

namespace {
int g_run_pid = 0;
void remember(int pid) { g_run_pid = pid; }
}  // namespace

TEST_CASE("runner: SIGINT and SIGTERM stop every process, revert faults and exit 130", "[runner]") {
  for (int sig : {SIGINT, SIGTERM}) {
    TempDir dir;
    // The workload ignores SIGTERM and leaves a grandchild behind: both must still go.
    dir.write("s.json", R"({"schema_version": 1, "name": "interrupt", "cluster": {"nodes": 2},
      "workload": {"kind": "command", "argv": ["/bin/sh", "-c", "trap '' TERM; sleep 300 & sleep 300; wait"]},
      "faults": [{"name": "window", "type": "marker", "at": "0s"}]})");
    std::thread killer([&] {
      // Wait for the fault to be applied, then interrupt.
      for (int i = 0; i < 400; ++i) {
        if (read_file(dir.file("out/timeline.jsonl")).find("fault_applied") != std::string::npos) break;
        std::this_thread::sleep_for(25ms);
      }
      ::kill(g_run_pid, sig);
    });
    auto r = run_command({binary(), "run", dir.file("s.json"), "--out", dir.file("out"), "--quiet"}, 60s, remember);
    killer.join();
    CHECK(r.exit_code == 130);
    auto res = read_results(dir);
    CHECK(res["verdict"] == "interrupted");
    REQUIRE(res["faults"].size() == 1);
    CHECK(res["faults"][0]["reverted_at_s"].is_number());
    for (const auto& p : res["processes"]) CHECK_FALSE(alive(p["pid"].get<long>()));
    // The grandchildren (sleep 300 &) were reaped too: nothing in the harness's process group survives.
    std::this_thread::sleep_for(100ms);
    CHECK(::kill(-g_run_pid, 0) == -1);
  }
}

TEST_CASE("runner: --dry-run prints the plan and starts nothing", "[runner]") {
  TempDir dir;
  auto r = run_command({binary(), "run", source("scenarios/command-example.json"), "--dry-run", "--out", dir.file("out")}, 20s);
  CHECK(r.exit_code == 0);
  CHECK_THAT(r.out, Catch::Contains("rank 3 on node1: python3"));
  CHECK_THAT(r.out, Catch::Contains("fault mid-run (marker) #1 at step 20"));
  CHECK_FALSE(std::filesystem::exists(dir.file("out")));
}

TEST_CASE("runner: a workload's daemon that left its process group does not outlive the run", "[runner]") {
  TempDir dir;
  dir.write("s.json", R"({"schema_version": 1, "name": "daemon",
    "workload": {"kind": "command", "argv": ["/bin/sh", "-c", "setsid sh -c 'echo $$ > {out}/daemon.pid; exec sleep 300' & sleep 0.5"]}})");
  auto r = run_command({binary(), "run", dir.file("s.json"), "--out", dir.file("out"), "--quiet"}, 60s);
  CHECK(r.exit_code == 0);
  auto pid_text = read_file(dir.file("out/daemon.pid"));
  REQUIRE(!pid_text.empty());
  long pid = std::stol(pid_text);
  std::this_thread::sleep_for(100ms);
  CHECK_FALSE(alive(pid));
}

TEST_CASE("runner: a scenario named without a directory runs (scenario_dir is the cwd)", "[runner]") {
  TempDir dir;
  dir.write("s.json", R"({"schema_version": 1, "name": "bare", "workload": {"kind": "command", "argv": ["/bin/sh", "-c", "echo {scenario_dir}"]}})");
  auto here = std::filesystem::current_path();
  std::filesystem::current_path(dir.path());
  auto r = run_command({binary(), "run", "s.json", "--out", "out", "--quiet"}, 60s);
  std::filesystem::current_path(here);
  CHECK(r.exit_code == 0);
  CHECK(read_file(dir.file("out/logs/rank0.out")) == std::filesystem::canonical(dir.path()).string() + "\n");
}

TEST_CASE("runner: in network namespaces each node has its own address and ranks reach each other", "[runner]") {
  if (skip_without_root("network namespaces need root")) return;
  TempDir dir;
  // Rank 1 (node 1) serves on its own address; rank 0 (node 0) connects to {node.1.addr}.
  dir.write("peer.py",
            "import os, socket, sys, time\n"
            "me, peer = os.environ['CHAOSBENCH_NODE_ADDR'], sys.argv[1]\n"
            "print(me, os.environ['MASTER_ADDR'], peer, flush=True)\n"
            "if os.environ['RANK'] == '1':\n"
            "    s = socket.create_server((me, 41000)); c, _ = s.accept(); c.sendall(b'hello'); c.close()\n"
            "else:\n"
            "    for i in range(100):\n"
            "        try:\n"
            "            print(socket.create_connection((peer, 41000), timeout=2).recv(5).decode(), flush=True); break\n"
            "        except OSError:\n"
            "            time.sleep(0.05)\n");
  dir.write("s.json", R"({"schema_version": 1, "name": "netns", "cluster": {"nodes": 2, "mode": "namespaces"},
    "workload": {"kind": "command", "argv": ["python3", "{scenario_dir}/peer.py", "{node.1.addr}"]}})");
  auto r = run_command({binary(), "run", dir.file("s.json"), "--out", dir.file("out"), "--quiet"}, 60s);
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  auto rank0 = read_file(dir.file("out/logs/rank0.out"));
  auto rank1 = read_file(dir.file("out/logs/rank1.out"));
  CHECK_THAT(rank0, Catch::StartsWith("10."));
  CHECK_THAT(rank0, Catch::EndsWith("hello\n"));
  // rank 0's address is MASTER_ADDR; rank 1 has another one, which rank 0 was given.
  std::string a0 = rank0.substr(0, rank0.find(' '));
  std::string a1 = rank1.substr(0, rank1.find(' '));
  CHECK(a0 != a1);
  CHECK_THAT(rank1, Catch::Contains(" " + a0 + " "));
  CHECK_THAT(rank0, Catch::Contains(" " + a1));
  CHECK_THAT(read_results(dir)["environment"]["cluster"].get<std::string>(), Catch::StartsWith("network namespaces"));
}

TEST_CASE("runner: 64 nodes in network namespaces run a trivial workload", "[runner]") {
  if (skip_without_root("network namespaces need root")) return;
  TempDir dir;
  dir.write("s.json", R"({"schema_version": 1, "name": "wide", "cluster": {"nodes": 64, "mode": "namespaces"},
    "workload": {"kind": "command", "argv": ["/bin/sh", "-c", "test -n \"$CHAOSBENCH_NODE_ADDR\""]}})");
  auto r = run_command({binary(), "run", dir.file("s.json"), "--out", dir.file("out"), "--quiet"}, 120s);
  INFO(r.err);
  CHECK(r.exit_code == 0);
  auto res = read_results(dir);
  CHECK(res["processes"].size() == 64);
}

}  // namespace runner_test
