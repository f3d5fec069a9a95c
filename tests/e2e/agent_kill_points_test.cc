// Crash safety of an agent: node 1's `chaosbench agent` is SIGKILLed at each named point of
// its life (common/process/crash_point.h: before and after it journals, forks, starts a rank,
// applies and reverts a fault, stops; one journal line torn halfway), while the controller
// and the other agents go on. The controller must end on its own, and `chaosbench cleanup`
// must then leave nothing of the dead agent: no process of its ranks (a grandchild of a
// rank included), no runtime directory, no node cgroup, no journal. And a dead agent that
// stays a zombie (its parent gone, pid 1 not reaping, as after an ssh session ends) is
// dead to cleanup.
#include <catch2/catch.hpp>

#include <filesystem>
#include <fmt/format.h>
#include <nlohmann/json.hpp>
#include <sys/stat.h>
#include <sys/wait.h>
#include <thread>
#include <optional>
#include <unistd.h>

#include "harness/journal/journal_reader.h"
#include "harness/journal/process_identity.h"
#include "test_util.h"

namespace agent_kill_points_test {  // this file's names, apart in a unity batch (tests/CMakeLists.txt)

using namespace chaosbench::test;
using namespace std::chrono_literals;
namespace fs = std::filesystem;

namespace {

// Node 1's rank pauses in the node's freezer cgroup from 1 s to 2 s and ends at 4 s; each
// rank leaves a grandchild (sleep 60) in its process group, which only the supervisor or
// cleanup kills.
constexpr const char* kScenario = R"({"schema_version": 1, "name": "agent-kill", "cluster": {"nodes": 3,
  "mode": "local-agents", "agent": {"command": "unused", "timeout": "2s"}},
  "workload": {"kind": "command", "argv": ["/bin/sh", "-c", "sleep 60 & sleep 4"]},
  "faults": [{"name": "hang", "type": "node.pause", "target": {"nodes": [1]}, "at": "1s", "duration": "1s"}]})";

// In the order an agent reaches them.
const std::vector<std::string> kKillPoints{
    "agent.joined",                    // handshake done, nothing made
    "journal.created",                 // the journal holds its owner line only
    "journal.recorded:path",           // runtime directory journaled, not made
    "journal.recorded:cgroup",         // a node cgroup journaled, not made
    "supervisor.forked",               // rank forked, not journaled, waiting to run
    "journal.recorded:process_group",  // rank journaled, not yet in the node's cgroups
    "supervisor.started",              // rank running, the controller not told
    "journal.torn:write",              // the pause's journal line torn halfway
    "journal.recorded:write",          // the pause journaled, the node not yet frozen
    "agent.applied",                   // the node frozen, the controller not told
    "journal.undone:write",            // thawed (revert), "done" not yet written
    "agent.stopping",                  // faults reverted at the end, ranks still running
    "agent.ranks_stopped",             // ranks gone, cgroups and state still here
    "journal.undone:cgroup",           // a node cgroup removed, "done" not yet written
};

class JournalDirEnv {
 public:
  explicit JournalDirEnv(const std::string& dir) { ::setenv("CHAOSBENCH_JOURNAL_DIR", dir.c_str(), 1); }
  ~JournalDirEnv() { ::unsetenv("CHAOSBENCH_JOURNAL_DIR"); }
};

class CrashAtEnv {
 public:
  explicit CrashAtEnv(const std::string& point) { ::setenv("CHAOSBENCH_CRASH_AT", point.c_str(), 1); }
  ~CrashAtEnv() { ::unsetenv("CHAOSBENCH_CRASH_AT"); }
};

std::string run_id_of(const std::string& timeline) {
  const auto at = timeline.find("\"run_id\"");
  if (at == std::string::npos) return "";
  const auto open = timeline.find('"', timeline.find(':', at));
  return timeline.substr(open + 1, timeline.find('"', open + 1) - open - 1);
}

// What of node 1's agent of run `id` is still on this machine, one line each.
std::vector<std::string> agent_leftovers(const std::string& id, const std::string& journals) {
  const std::string name = fmt::format("chaosbench-{}-n1", id);
  std::vector<std::string> out;
  if (fs::exists("/tmp/" + name)) out.push_back("runtime directory /tmp/" + name);
  std::error_code ec;
  for (auto it = fs::recursive_directory_iterator("/sys/fs/cgroup", ec); it != fs::recursive_directory_iterator();
       it.increment(ec)) {
    if (ec || it.depth() > 4) {
      it.disable_recursion_pending();
      continue;
    }
    if (it->path().filename() == name) out.push_back("cgroup " + it->path().string());
  }
  for (const auto& p : fs::directory_iterator("/proc", ec)) {
    const std::string pid = p.path().filename().string();
    if (pid.find_first_not_of("0123456789") != std::string::npos) continue;
    const auto st = chaosbench::harness::read_proc_stat(std::stoi(pid));
    if (!st || st->state == 'Z') continue;
    // A rank's environment names its agent's runtime directory.
    if (read_file("/proc/" + pid + "/environ").find(name) != std::string::npos)
      out.push_back("process " + pid + ": " + read_file("/proc/" + pid + "/cmdline"));
  }
  for (const auto& j : fs::directory_iterator(journals, ec)) out.push_back("journal " + j.path().string());
  return out;
}

}  // namespace

TEST_CASE("agents: an agent SIGKILLed at 14 points of its life leaves nothing after cleanup", "[agents]") {
  if (skip_without_root("node cgroups and their freezer need root")) return;
  TempDir dir;
  const std::string journals = dir.file("journals");
  ::mkdir(journals.c_str(), 0700);
  JournalDirEnv journal_env(journals);
  dir.write("s.json", kScenario);
  for (std::size_t i = 0; i < kKillPoints.size(); ++i) {
    const std::string& point = kKillPoints[i];
    INFO("kill point " << point);
    const std::string out = dir.file(fmt::format("out{}", i));
    CommandResult r;
    {
      CrashAtEnv crash(point + "@node1");
      r = run_command({binary(), "run", dir.file("s.json"), "--out", out, "--quiet"}, 60s);
    }
    INFO(r.err);
    // The point was reached: the controller saw node 1's agent go and ended on its own.
    CHECK_FALSE(r.timed_out);
    CHECK(r.exit_code != 0);
    CHECK(r.err.find("the agent on node1 is gone") != std::string::npos);
    const std::string id = run_id_of(read_file(out + "/timeline.jsonl"));
    REQUIRE(!id.empty());
    auto c = run_command({binary(), "cleanup"}, 60s);
    INFO(c.out << c.err);
    CHECK(c.exit_code == 0);
    const auto left = agent_leftovers(id, journals);
    for (const auto& l : left) UNSCOPED_INFO("left: " << l);
    CHECK(left.empty());
  }
}

TEST_CASE("cleanup: a journal whose owner is a zombie is a dead run's and is undone", "[cleanup]") {
  TempDir dir;
  const std::string journals = dir.file("journals");
  ::mkdir(journals.c_str(), 0700);
  JournalDirEnv journal_env(journals);
  // The owner: a child that exits at once and is not reaped until the end of the test,
  // as a SIGKILLed agent whose sshd session ended first stays under a pid 1 that never reaps.
  const pid_t owner = ::fork();
  if (owner == 0) ::_exit(0);
  REQUIRE(owner > 0);
  std::optional<chaosbench::harness::ProcStat> st;
  for (int i = 0; i < 200; ++i) {
    st = chaosbench::harness::read_proc_stat(owner);
    if (st && st->state == 'Z') break;
    std::this_thread::sleep_for(10ms);
  }
  REQUIRE(st);
  REQUIRE(st->state == 'Z');
  CHECK_FALSE(chaosbench::harness::same_process(owner, st->start_time));
  // Its runtime directory, the one path a journal may name.
  const std::string run_id = fmt::format("zombie-test-{}", owner);
  const std::string runtime = "/tmp/chaosbench-" + run_id;
  REQUIRE(::mkdir(runtime.c_str(), 0700) == 0);
  dir.write("journals/" + run_id + ".journal",
            fmt::format("{{\"journal\":1,\"run_id\":\"{}\",\"pid\":{},\"start_time\":{},\"out\":\"o\"}}\n"
                        "{{\"id\":1,\"op\":\"record\",\"kind\":\"path\",\"path\":\"{}\"}}\n",
                        run_id, owner, st->start_time, runtime));
  ::chmod(dir.file("journals/" + run_id + ".journal").c_str(), 0600);
  auto c = run_command({binary(), "cleanup"}, 30s);
  ::waitpid(owner, nullptr, 0);
  INFO(c.out << c.err);
  CHECK(c.exit_code == 0);
  CHECK(c.out.find("still running") == std::string::npos);
  CHECK_FALSE(fs::exists(runtime));
  CHECK_FALSE(fs::exists(dir.file("journals/" + run_id + ".journal")));
  fs::remove(runtime);
}

}  // namespace agent_kill_points_test
