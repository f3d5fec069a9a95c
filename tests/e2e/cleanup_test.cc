// Crash safety: the harness is SIGKILLed at many points of a run; `chaosbench cleanup`
// must then leave nothing of that run (processes, runtime directory, journal), using only
// what the journal says.
#include <catch2/catch.hpp>

#include <csignal>
#include <cstdlib>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <sstream>
#include <set>
#include <thread>

#include "harness/journal/journal_reader.h"
#include "harness/journal/process_identity.h"
#include "test_util.h"

namespace cleanup_test {  // this file's names, apart in a unity batch (tests/CMakeLists.txt)

using namespace chaosbench::test;
using namespace chaosbench::harness;
using namespace std::chrono_literals;
namespace fs = std::filesystem;

namespace {

// The journal directory the harness under test uses, for the test's duration.
class JournalDirEnv {
 public:
  explicit JournalDirEnv(const std::string& dir) { ::setenv("CHAOSBENCH_JOURNAL_DIR", dir.c_str(), 1); }
  ~JournalDirEnv() { ::unsetenv("CHAOSBENCH_JOURNAL_DIR"); }
};

std::chrono::milliseconds g_kill_after{0};
void kill_later(int pid) {
  std::thread([pid] {
    std::this_thread::sleep_for(g_kill_after);
    ::kill(pid, SIGKILL);
  }).detach();
}

bool group_alive(pid_t pgid) {
  for (const auto& p : list_processes())
    if (p.pgrp == pgid && p.state != 'Z') return true;
  return false;
}

}  // namespace

TEST_CASE("cleanup: after SIGKILL of the harness at 24 points of a run, cleanup leaves nothing", "[cleanup]") {
  TempDir dir;
  const std::string journals = dir.file("journals");
  JournalDirEnv env(journals);
  // Each rank leaves a grandchild in its process group: PDEATHSIG kills the rank with the
  // harness, but only cleanup can kill what the rank started.
  // As root the run also has network faults: a delay line with its chain on the bridge,
  // a partition, an htb rate limit on a node's interface.
  const std::string network_faults = ::geteuid() == 0 ? R"(,
               {"name": "slow", "type": "network.delay", "target": {"nodes": [0]}, "at": "120ms", "duration": "400ms",
                "delay": "5ms"},
               {"name": "cut", "type": "network.partition", "target": {"nodes": [2]}, "at": "300ms", "duration": "300ms"},
               {"name": "thin", "type": "network.rate", "target": {"nodes": [1]}, "at": "200ms", "duration": "500ms",
                "rate": "10mbit"})" : "";
  dir.write("s.json", R"({"schema_version": 1, "name": "crash", "cluster": {"nodes": 3},
    "workload": {"kind": "command", "argv": ["/bin/sh", "-c", "sleep 300 & sleep 300"]},
    "faults": [{"name": "w", "type": "marker", "at": "100ms", "duration": "100ms", "repeat": {"every": "200ms", "count": 4}},
               {"name": "hang", "type": "node.pause", "target": {"nodes": [1]}, "at": "150ms", "duration": "300ms",
                "repeat": {"every": "400ms", "count": 2}})" + network_faults + "]}");
  // The kill points are times after the start: the host's BLAS probe (seconds, on its
  // first run only) must not take them all, so it runs first.
  REQUIRE(run_command({binary(), "doctor"}, 120s).exit_code == 0);
  std::set<std::string> leftovers_seen;
  for (int point = 0; point < 24; ++point) {
    INFO("kill point " << point);
    g_kill_after = std::chrono::milliseconds(point * 40);
    auto r = run_command({binary(), "run", dir.file("s.json"), "--out", dir.file("out" + std::to_string(point)), "--quiet"},
                         30s, kill_later);
    REQUIRE(r.exit_code == -1);  // killed, not finished
    // What the journal holds now is what cleanup must undo.
    std::vector<pid_t> groups;
    std::vector<std::string> paths, cgroup_dirs;
    for (const auto& j : scan_journals(journals)) {
      CHECK_FALSE(j.owner_alive);
      for (const auto& e : j.pending) {
        if (e.kind == "process_group") groups.push_back(static_cast<pid_t>(std::stol(e.fields.at("pgid"))));
        if (e.kind == "path") paths.push_back(e.fields.at("path"));
        if (e.kind == "cgroup") cgroup_dirs.push_back(e.fields.at("path"));
        leftovers_seen.insert(e.kind);
      }
    }
    // --dry-run changed nothing. (A path may be gone already: the harness can die between
    // removing it and closing its journal entry.)
    std::vector<std::string> present;
    for (const auto& p : paths)
      if (fs::exists(p)) present.push_back(p);
    auto dry = run_command({binary(), "cleanup", "--dry-run"}, 30s);
    CHECK(dry.exit_code == 0);
    for (const auto& p : present) CHECK(fs::exists(p));
    auto c = run_command({binary(), "cleanup"}, 30s);
    INFO(c.out << c.err);
    CHECK(c.exit_code == 0);
    for (pid_t g : groups) CHECK_FALSE(group_alive(g));  // frozen ones too: cleanup thaws first
    for (const auto& p : paths) CHECK_FALSE(fs::exists(p));
    CHECK(scan_journals(journals).empty());
    for (const auto& p : cgroup_dirs) CHECK_FALSE(fs::exists(p));
    // The run's network namespaces (named in its timeline when they came up) are gone
    // with their links: held only by the harness's fds and the processes inside.
    std::istringstream timeline(read_file(dir.file("out" + std::to_string(point) + "/timeline.jsonl")));
    std::string line;
    while (std::getline(timeline, line)) {
      if (line.find("\"cluster_up\"") == std::string::npos) continue;
      auto ids = nlohmann::json::parse(line)["netns"];
      leftovers_seen.insert("netns");
      std::error_code ec;
      for (const auto& p : fs::directory_iterator("/proc", ec)) {
        std::error_code e2;
        auto ns = fs::read_symlink(p.path() / "ns/net", e2).string();
        for (const auto& id : ids) CHECK(ns != id.get<std::string>());
      }
    }
  }
  // The kill points reached runs that had started processes and made their runtime
  // directory, and (as root) node cgroups with a frozen node among them.
  CHECK(leftovers_seen.count("process_group") == 1);
  CHECK(leftovers_seen.count("path") == 1);
  if (::geteuid() == 0) {
    CHECK(leftovers_seen.count("cgroup") == 1);
    CHECK(leftovers_seen.count("write") == 1);
    CHECK(leftovers_seen.count("netns") == 1);
    CHECK(leftovers_seen.count("iptables_chain") == 1);
    CHECK(leftovers_seen.count("tc_root") == 1);
  }
}

TEST_CASE("cleanup: a live run's journal is left alone, and nothing outside journals is touched", "[cleanup]") {
  TempDir dir;
  const std::string journals = dir.file("journals");
  JournalDirEnv env(journals);
  fs::create_directories(journals);
  // A journal whose owner is this test process (alive): cleanup must skip it.
  auto self = read_proc_stat(::getpid());
  dir.write("journals/live.journal", "{\"journal\":1,\"run_id\":\"live\",\"pid\":" + std::to_string(::getpid()) +
                                         ",\"start_time\":" + std::to_string(self->start_time) + ",\"out\":\"x\"}\n" +
                                         "{\"id\":1,\"op\":\"record\",\"kind\":\"path\",\"path\":\"" + dir.file("keep") + "\"}\n");
  dir.write("keep", "x");
  dir.write("other", "not in any journal");
  auto c = run_command({binary(), "cleanup"}, 30s);
  CHECK(c.exit_code == 0);
  CHECK_THAT(c.out, Catch::Contains("still running"));
  CHECK(fs::exists(dir.file("keep")));
  CHECK(fs::exists(dir.file("other")));
  CHECK(fs::exists(journals + "/live.journal"));
}

TEST_CASE("cleanup: a torn last line and a finished entry are read as the harness meant", "[cleanup]") {
  TempDir dir;
  dir.write("r.journal",
            "{\"journal\":1,\"run_id\":\"r\",\"pid\":999999999,\"start_time\":1,\"out\":\"o\"}\n"
            "{\"id\":1,\"op\":\"record\",\"kind\":\"path\",\"path\":\"/nonexistent/a\"}\n"
            "{\"id\":2,\"op\":\"record\",\"kind\":\"path\",\"path\":\"/nonexistent/b\"}\n"
            "{\"id\":1,\"op\":\"done\"}\n"
            "{\"id\":3,\"op\":\"rec");
  auto j = read_journal(dir.file("r.journal"));
  CHECK_FALSE(j.owner_alive);
  REQUIRE(j.pending.size() == 1);
  CHECK(j.pending[0].id == 2);
  CHECK(undo_entry(j.pending[0], false) == "/nonexistent/b: already gone");
}

}  // namespace cleanup_test
