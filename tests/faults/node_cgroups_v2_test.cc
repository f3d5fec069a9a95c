// Node cgroups on cgroup v2. This machine's controllers are bound to v1, but a cgroup2
// hierarchy can still be mounted (its cgroup.controllers is empty, its core files work):
// the tests mount one in a temporary directory and run node.pause (cgroup.freeze),
// node.kill (cgroup.kill) and removal on real processes there, and the runner end to end
// on the host's own cgroup2 mount with CHAOSBENCH_CGROUP_VERSION=2. cpu.max and
// memory.max cannot be written here: their file names and values are tested as pure
// functions, and the controller hand-on (subtree_control, the harness's leaf) with
// hugetlb, the one controller this host leaves to v2.
#include <catch2/catch.hpp>

#include <csignal>
#include <cstdlib>
#include <filesystem>
#include <fmt/format.h>
#include <fstream>
#include <optional>
#include <nlohmann/json.hpp>
#include <sstream>
#include <sys/mount.h>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>

#include "common/kernel/cgroup_files.h"
#include "faults/node/node_pause.h"
#include "faults/node/signal_fault.h"
#include "harness/cluster/node_cgroups.h"
#include "harness/journal/journal.h"
#include "harness/journal/journal_reader.h"
#include "harness/plan/target_resolver.h"
#include "test_util.h"

namespace node_cgroups_v2_test {  // this file's names, apart in a unity batch (tests/CMakeLists.txt)

using namespace chaosbench::test;
using namespace chaosbench::harness;
using namespace chaosbench::faults;
using namespace std::chrono_literals;
namespace fs = std::filesystem;

namespace {

// A cgroup2 hierarchy mounted at DIR/cg for the test's duration; unmounted (lazily, so it
// always succeeds) before the TempDir around it is removed, also when a check fails.
class Cgroup2Mount {
 public:
  explicit Cgroup2Mount(const TempDir& dir) : path_(dir.file("cg")) {
    fs::create_directory(path_);
    if (::mount("none", path_.c_str(), "cgroup2", 0, nullptr) != 0)
      throw std::runtime_error("mount -t cgroup2: " + std::string(std::strerror(errno)));
  }
  ~Cgroup2Mount() {
    ::umount2(path_.c_str(), MNT_DETACH);
    ::rmdir(path_.c_str());
  }
  Cgroup2Mount(const Cgroup2Mount&) = delete;
  Cgroup2Mount& operator=(const Cgroup2Mount&) = delete;
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

// A child process started in node `node`'s cgroups before it execs /bin/sh -c `script`
// (as the supervisor does); SIGKILLed and reaped on scope exit unless reaped before.
class NodeProcess {
 public:
  NodeProcess(const NodeCgroups& cgroups, int node, const std::string& script) {
    int go[2];
    if (::pipe(go) != 0) throw std::runtime_error("pipe");
    pid_ = ::fork();
    if (pid_ == 0) {
      ::close(go[1]);
      char c;
      if (::read(go[0], &c, 1) != 1) ::_exit(126);
      ::execl("/bin/sh", "sh", "-c", script.c_str(), static_cast<char*>(nullptr));
      ::_exit(127);
    }
    ::close(go[0]);
    cgroups.join(node, pid_);
    [[maybe_unused]] auto n = ::write(go[1], "x", 1);
    ::close(go[1]);
  }
  ~NodeProcess() {
    if (pid_ <= 0) return;
    ::kill(pid_, SIGKILL);
    ::waitpid(pid_, nullptr, 0);
  }
  NodeProcess(const NodeProcess&) = delete;
  NodeProcess& operator=(const NodeProcess&) = delete;
  pid_t pid() const { return pid_; }

  // The signal that ended it, once it has ended within `limit`; 0 when it still runs.
  int wait_signal(std::chrono::milliseconds limit) {
    auto until = std::chrono::steady_clock::now() + limit;
    int status = 0;
    while (std::chrono::steady_clock::now() < until) {
      if (::waitpid(pid_, &status, WNOHANG) == pid_) {
        pid_ = -1;
        return WIFSIGNALED(status) ? WTERMSIG(status) : -1;
      }
      std::this_thread::sleep_for(5ms);
    }
    return 0;
  }

 private:
  pid_t pid_ = -1;
};

std::string unique_run_id(const char* what) { return fmt::format("{}-{}-{}", what, ::getpid(), std::rand()); }

// A temporary cgroup2 mount, a journal and the run cgroup node cgroups will make there.
struct MountedRun {
  TempDir dir;
  Cgroup2Mount mount{dir};
  std::string run_id;
  Journal journal;
  std::string parent;
  explicit MountedRun(const char* what)
      : run_id(unique_run_id(what)), journal(dir.file("journal"), run_id, dir.path()),
        parent(mount.path() + "/chaosbench-" + run_id) {}
};

ResolvedTarget nodes_target(const std::vector<int>& nodes, const NodeCgroups& cgroups) {
  TargetSpec spec;
  spec.form = TargetForm::kNodes;
  spec.indices = nodes;
  ClusterSpec cluster;
  cluster.nodes = 2;
  return resolve_target(spec, cluster, {}, 1, 0, &cgroups);
}

long long counter(const std::string& path) {
  std::ifstream in(path);
  long long n = -1;
  in >> n;
  return n;
}

// Sets an environment variable for the scope (the harness under test inherits it).
class ScopedEnv {
 public:
  ScopedEnv(const char* name, const std::string& value) : name_(name) { ::setenv(name, value.c_str(), 1); }
  ~ScopedEnv() { ::unsetenv(name_); }
  ScopedEnv(const ScopedEnv&) = delete;
  ScopedEnv& operator=(const ScopedEnv&) = delete;

 private:
  const char* name_;
};

// This process's cgroup on the host's own cgroup2 hierarchy, for runs with
// CHAOSBENCH_CGROUP_VERSION=2; "" (after a WARN) when the test must skip.
std::string host_v2_cgroup() {
  if (skip_without_root("node cgroups need root")) return "";
  std::string own = own_v2_cgroup();
  if (own.empty()) WARN("skipped: no cgroup2 hierarchy mounted on this host");
  return own;
}

}  // namespace

TEST_CASE("node cgroups v2: v1 and v2 file names and values for the same settings", "[node-faults]") {
  CHECK(chaosbench::common::cgroup_file(1, chaosbench::common::CgroupKnob::kFreeze) == "freezer.state");
  CHECK(chaosbench::common::cgroup_file(2, chaosbench::common::CgroupKnob::kFreeze) == "cgroup.freeze");
  CHECK(chaosbench::common::cgroup_file(1, chaosbench::common::CgroupKnob::kFreezeState) == "freezer.state");
  CHECK(chaosbench::common::cgroup_file(2, chaosbench::common::CgroupKnob::kFreezeState) == "cgroup.events");
  CHECK(chaosbench::common::cgroup_file(1, chaosbench::common::CgroupKnob::kCpuQuota) == "cpu.cfs_quota_us");
  CHECK(chaosbench::common::cgroup_file(2, chaosbench::common::CgroupKnob::kCpuQuota) == "cpu.max");
  CHECK(chaosbench::common::cgroup_file(1, chaosbench::common::CgroupKnob::kMemoryLimit) == "memory.limit_in_bytes");
  CHECK(chaosbench::common::cgroup_file(2, chaosbench::common::CgroupKnob::kMemoryLimit) == "memory.max");
  CHECK(chaosbench::common::cgroup_file(1, chaosbench::common::CgroupKnob::kOomEvents) == "memory.oom_control");
  CHECK(chaosbench::common::cgroup_file(2, chaosbench::common::CgroupKnob::kOomEvents) == "memory.events");
  // v1 backends stay what results and the doctor have always said.
  CHECK(chaosbench::common::cgroup_backend(1, chaosbench::common::CgroupKnob::kFreeze) == "freezer cgroup");
  CHECK(chaosbench::common::cgroup_backend(1, chaosbench::common::CgroupKnob::kCpuQuota) == "cpu cgroup (CFS quota)");
  CHECK(chaosbench::common::cgroup_backend(1, chaosbench::common::CgroupKnob::kMemoryLimit) == "memory cgroup");
  CHECK(chaosbench::common::cgroup_backend(2, chaosbench::common::CgroupKnob::kCpuQuota) == "cpu cgroup (v2 cpu.max)");

  CHECK(chaosbench::common::freeze_value(1, true) == "FROZEN");
  CHECK(chaosbench::common::freeze_value(1, false) == "THAWED");
  CHECK(chaosbench::common::freeze_value(2, true) == "1");
  CHECK(chaosbench::common::freeze_value(2, false) == "0");
  CHECK(chaosbench::common::freeze_requested(1, "FREEZING"));
  CHECK(chaosbench::common::freeze_requested(1, "FROZEN"));
  CHECK_FALSE(chaosbench::common::freeze_requested(1, "THAWED"));
  CHECK(chaosbench::common::freeze_requested(2, "1"));
  CHECK_FALSE(chaosbench::common::freeze_requested(2, "0"));
  CHECK(chaosbench::common::freeze_done(1, "FROZEN"));
  CHECK_FALSE(chaosbench::common::freeze_done(1, "FREEZING"));
  CHECK(chaosbench::common::freeze_done(2, "populated 1\nfrozen 1"));
  CHECK_FALSE(chaosbench::common::freeze_done(2, "populated 1\nfrozen 0"));
  CHECK_FALSE(chaosbench::common::freeze_done(2, ""));

  // v1: the quota alone, in the period of cpu.cfs_period_us; never below 1 ms.
  CHECK(chaosbench::common::cpu_quota_us(0.2, 100000) == 20000);
  CHECK(chaosbench::common::cpu_quota_us(1.5, 50000) == 75000);
  CHECK(chaosbench::common::cpu_quota_us(0.001, 100000) == 1000);
  // v2: "QUOTA PERIOD", keeping the period cpu.max has; its original is what revert writes.
  CHECK(chaosbench::common::cpu_max_value(0.2, "max 100000") == "20000 100000");
  CHECK(chaosbench::common::cpu_max_value(0.5, "50000 200000") == "100000 200000");
  CHECK(chaosbench::common::cpu_max_value(0.001, "max 100000") == "1000 100000");
  CHECK(chaosbench::common::cpu_max_value(2, "max") == "200000 100000");
  CHECK(chaosbench::common::cpu_max_value(2, "") == "200000 100000");

  CHECK(chaosbench::common::oom_kill_count("oom_kill_disable 0\nunder_oom 0\noom_kill 3\n") == 3);  // v1 memory.oom_control
  CHECK(chaosbench::common::oom_kill_count("low 0\nhigh 0\nmax 4\noom 2\noom_kill 1\noom_group_kill 0\n") == 1);  // v2 memory.events
  CHECK_FALSE(chaosbench::common::oom_kill_count("low 0\n"));
}

TEST_CASE("node cgroups v2: the harness's own v2 cgroup and the version chosen", "[node-faults]") {
  const std::string unified = "30 23 0:26 / /sys/fs/cgroup rw,nosuid - cgroup2 cgroup2 rw,nsdelegate\n";
  CHECK(own_v2_cgroup("0::/user.slice/user-0.slice/session-1.scope\n", unified) ==
        "/sys/fs/cgroup/user.slice/user-0.slice/session-1.scope");
  CHECK(own_v2_cgroup("0::/\n", unified) == "/sys/fs/cgroup");
  // Hybrid: v1 lines beside "0::"; the unified mount under /sys/fs/cgroup/unified. A test's
  // own cgroup2 mount listed first does not win over it.
  const std::string hybrid = "50 23 0:38 / /tmp/x\\040y rw - cgroup2 none rw\n"
                             "32 31 0:29 / /sys/fs/cgroup/cpu rw - cgroup cgroup rw,cpu\n"
                             "41 31 0:38 / /sys/fs/cgroup/unified rw - cgroup2 cgroup2 rw\n";
  CHECK(own_v2_cgroup("4:memory:/a\n1:cpu:/\n0::/\n", hybrid) == "/sys/fs/cgroup/unified");
  CHECK(own_v2_cgroup("0::/a\n", "50 23 0:38 / /tmp/x\\040y rw - cgroup2 none rw\n") == "/tmp/x y/a");
  // A mount of a subtree (a container's view): the path is taken relative to its root.
  const std::string subtree = "60 23 0:26 /kubepods/pod1 /sys/fs/cgroup rw - cgroup2 cgroup2 rw\n";
  CHECK(own_v2_cgroup("0::/kubepods/pod1/c1\n", subtree) == "/sys/fs/cgroup/c1");
  CHECK(own_v2_cgroup("0::/elsewhere\n", subtree) == "");
  CHECK(own_v2_cgroup("4:memory:/a\n", unified) == "");  // v1 only
  CHECK(own_v2_cgroup("0::/\n", "32 31 0:29 / /sys/fs/cgroup/cpu rw - cgroup cgroup rw,cpu\n") == "");

  // v1 wherever a controller asked for is on a v1 hierarchy (this machine); v2 otherwise.
  CHECK(node_cgroup_version(true, true, "") == 1);
  CHECK(node_cgroup_version(false, true, "") == 2);
  CHECK(node_cgroup_version(true, false, "") == 1);
  CHECK(node_cgroup_version(false, false, "") == 0);
  CHECK(node_cgroup_version(true, true, "2") == 2);
  CHECK(node_cgroup_version(true, false, "2") == 0);
  CHECK(node_cgroup_version(false, true, "1") == 1);
}

TEST_CASE("node cgroups v2: how cpu and memory reach the node cgroups (no internal processes)", "[node-faults]") {
  const std::vector<std::string> both{"cpu", "memory"};
  SECTION("the root cgroup may hold the harness and hand controllers on") {
    auto plan = plan_v2_controllers(both, "/sys/fs/cgroup", "cpuset cpu io memory pids\n", "", true, true);
    CHECK(plan.enable == both);
    CHECK(plan.enable_in_base == both);
    CHECK_FALSE(plan.move_harness);
    CHECK(plan.why_missing.empty());
  }
  SECTION("a delegated cgroup the harness has to itself: it moves into a leaf first") {
    auto plan = plan_v2_controllers(both, "/sys/fs/cgroup/run.scope", "cpu memory pids", "", false, false);
    CHECK(plan.enable == both);
    CHECK(plan.enable_in_base == both);
    CHECK(plan.move_harness);
  }
  SECTION("controllers already handed on need no move") {
    auto plan = plan_v2_controllers(both, "/sys/fs/cgroup/x", "cpu memory", "cpu memory", false, true);
    CHECK(plan.enable == both);
    CHECK(plan.enable_in_base.empty());
    CHECK_FALSE(plan.move_harness);
  }
  SECTION("shared with other processes: those left to enable are missing, with the reason") {
    auto plan = plan_v2_controllers(both, "/sys/fs/cgroup/session.scope", "cpu memory", "cpu", false, true);
    CHECK(plan.enable == std::vector<std::string>{"cpu"});
    CHECK(plan.enable_in_base.empty());
    CHECK_FALSE(plan.move_harness);
    REQUIRE(plan.why_missing.count("memory") == 1);
    CHECK_THAT(plan.why_missing["memory"], Catch::Contains("holds other processes") && Catch::Contains("Delegate=yes"));
  }
  SECTION("not delegated (or bound to v1, as on this machine's hybrid hierarchy)") {
    auto plan = plan_v2_controllers(both, "/sys/fs/cgroup/unified", "hugetlb\n", "", true, false);
    CHECK(plan.enable.empty());
    CHECK_THAT(plan.why_missing["cpu"], Catch::Contains("cgroup.controllers: \"hugetlb\""));
    CHECK(plan.why_missing.count("memory") == 1);
  }
}

TEST_CASE("node cgroups v2: a cgroup_move entry of a harness that is gone has nothing to do", "[node-faults]") {
  pid_t gone = ::fork();
  if (gone == 0) ::_exit(0);
  ::waitpid(gone, nullptr, 0);
  JournalEntry e{1, "cgroup_move", {{"pid", std::to_string(gone)}, {"start_time", "1"}, {"from", "/nonexistent/a/harness"},
                                    {"to", "/nonexistent/a"}}};
  CHECK_THAT(undo_entry(e, true), Catch::Contains("nothing to move"));
  CHECK_THAT(undo_entry(e, false), Catch::Contains("nothing to move"));
}

TEST_CASE("node cgroups v2: pause through cgroup.freeze, kill through cgroup.kill, clean removal", "[node-faults]") {
  if (skip_without_root("mounting cgroup2 needs root")) return;
  MountedRun m("v2test");
  auto& journal = m.journal;
  const std::string& parent = m.parent;
  {
    NodeCgroups cgroups(2, m.run_id, journal, {"freezer", "pids", "cpu"}, m.mount.path());
    REQUIRE(cgroups.available());
    CHECK(cgroups.version() == 2);
    CHECK(cgroups.dir(0, "freezer") == parent + "/node0");
    CHECK(cgroups.dir(1, "pids") == parent + "/node1");
    // This host binds cpu to v1: its v2 cgroup.controllers does not offer it.
    CHECK(cgroups.dir(0, "cpu").empty());
    CHECK_THAT(cgroups.why_missing("cpu"), Catch::Contains("not available"));

    const std::string count_file = m.dir.file("count");
    NodeProcess counting(cgroups, 0, "i=0; while :; do i=$((i+1)); echo $i > " + count_file + "; sleep 0.01; done");
    NodeProcess sleeping(cgroups, 1, "sleep 60");
    CHECK_THAT(read_file(parent + "/node0/cgroup.procs"), Catch::Contains(std::to_string(counting.pid())));
    CHECK_THAT(read_file(parent + "/node1/cgroup.procs"), Catch::Contains(std::to_string(sleeping.pid())));
    auto target = nodes_target({0}, cgroups);
    CHECK(target.cgroup_version == 2);
    REQUIRE(target.cgroups.at("freezer") == std::vector<std::string>{parent + "/node0"});

    while (counter(count_file) < 3) std::this_thread::sleep_for(10ms);
    NodePauseFault pause;
    pause.apply(target, journal);  // returns once cgroup.events says "frozen 1"
    CHECK(pause.backend() == "freezer cgroup (v2 cgroup.freeze)");
    CHECK(read_file(parent + "/node0/cgroup.freeze") == "1\n");
    CHECK_THAT(read_file(parent + "/node0/cgroup.events"), Catch::Contains("frozen 1"));
    CHECK_THAT(read_file(parent + "/node1/cgroup.events"), Catch::Contains("frozen 0"));
    const long long frozen_at = counter(count_file);
    std::this_thread::sleep_for(300ms);  // ~30 iterations if it ran
    CHECK(counter(count_file) == frozen_at);
    CHECK(journal.pending() == 3 + 1);  // run cgroup, two nodes, the thaw

    pause.revert();
    CHECK(read_file(parent + "/node0/cgroup.freeze") == "0\n");
    CHECK(journal.pending() == 3);
    auto until = std::chrono::steady_clock::now() + 2s;
    while (counter(count_file) <= frozen_at && std::chrono::steady_clock::now() < until) std::this_thread::sleep_for(10ms);
    CHECK(counter(count_file) > frozen_at);  // runs on

    // node.kill on both nodes with no rank pids known: cgroup.kill alone ends them.
    SignalFault kill(SIGKILL, true);
    kill.apply(nodes_target({0, 1}, cgroups), journal);
    CHECK(counting.wait_signal(2s) == SIGKILL);
    CHECK(sleeping.wait_signal(2s) == SIGKILL);
    // The shells are reaped; what they started may take a moment longer to leave the
    // cgroup (cgroup.kill is asynchronous, and an exiting task is listed until it is gone).
    for (const char* node : {"/node0/cgroup.procs", "/node1/cgroup.procs"}) {
      const auto deadline = std::chrono::steady_clock::now() + 2s;
      while (!read_file(parent + node).empty() && std::chrono::steady_clock::now() < deadline)
        std::this_thread::sleep_for(10ms);
      CHECK(read_file(parent + node).empty());
    }
  }
  CHECK_FALSE(fs::exists(parent));
  CHECK(journal.pending() == 0);
}

TEST_CASE("node cgroups v2: removal thaws a frozen node and ends what is left in it", "[node-faults]") {
  if (skip_without_root("mounting cgroup2 needs root")) return;
  MountedRun m("v2frozen");
  auto& journal = m.journal;
  const std::string& parent = m.parent;
  std::optional<NodeProcess> left;
  {
    NodeCgroups cgroups(2, m.run_id, journal, {"freezer", "pids"}, m.mount.path());
    REQUIRE(cgroups.available());
    left.emplace(cgroups, 1, "sleep 60 & sleep 60");
    NodePauseFault pause;
    pause.apply(nodes_target({1}, cgroups), journal);
    // No revert, no kill: as after a crash, the node cgroups' undo must cope.
  }
  CHECK(left->wait_signal(2s) == SIGKILL);
  CHECK_FALSE(fs::exists(parent));
  // The thaw entry is still pending; its file went with the cgroup.
  CHECK(journal.finish().empty());
}

TEST_CASE("node cgroups v2: controllers reach the nodes, the harness moves into a leaf and back", "[node-faults]") {
  if (skip_without_root("mounting cgroup2 needs root")) return;
  TempDir dir;
  Cgroup2Mount mount(dir);
  // hugetlb stands in for cpu and memory: the one controller this host leaves to v2.
  if (read_file(mount.path() + "/cgroup.controllers").find("hugetlb") == std::string::npos) {
    WARN("skipped: no controller is free for cgroup v2 on this host (hugetlb is bound to v1)");
    return;
  }
  // The hierarchy's root hands hugetlb to a base cgroup that stands for the harness's own.
  struct RootHugetlb {
    std::string file;
    bool added = false;
    explicit RootHugetlb(const std::string& root) : file(root + "/cgroup.subtree_control") {
      if (read_file(file).find("hugetlb") != std::string::npos) return;
      std::ofstream(file) << "+hugetlb";
      added = true;
    }
    ~RootHugetlb() {
      if (added) std::ofstream(file) << "-hugetlb";
    }
  } root_hugetlb(mount.path());
  const std::string base = mount.path() + "/chaosbench-test-base-" + std::to_string(::getpid());
  fs::create_directory(base);
  struct RemoveBase {
    std::string path;
    ~RemoveBase() { ::rmdir(path.c_str()); }
  } remove_base{base};
  REQUIRE_THAT(read_file(base + "/cgroup.controllers"), Catch::Contains("hugetlb"));

  // The "harness" is a child that moves into `base`, sets up node cgroups and undoes them;
  // it reports what was wrong through a file (a forked child must not use Catch).
  auto run_harness = [&](const std::string& run_id, bool shared) {
    const std::string report = dir.file("report-" + run_id);
    pid_t child = ::fork();
    if (child == 0) {
      std::ostringstream wrong;
      auto expect = [&](bool ok, const std::string& what) {
        if (!ok) wrong << what << "\n";
      };
      auto own_line = [] {
        std::ifstream in("/proc/self/cgroup");
        std::string line, v2;
        while (std::getline(in, line))
          if (line.starts_with("0::")) v2 = line.substr(3);
        return v2;
      };
      try {
        std::ofstream(base + "/cgroup.procs") << ::getpid();
        const std::string base_rel = own_line();
        const std::string parent = base + "/chaosbench-" + run_id;
        {
          Journal journal(dir.file("journal-" + run_id), run_id, dir.path());
          {
            NodeCgroups cgroups(1, run_id, journal, {"freezer", "pids", "hugetlb"}, base);
            if (!shared) {
              expect(cgroups.dir(0, "hugetlb") == parent + "/node0", "no hugetlb node directory");
              expect(own_line() == base_rel + "/chaosbench-" + run_id + "/harness", "not in the leaf: " + own_line());
              expect(read_file(base + "/cgroup.procs").empty(), "base still holds processes");
              expect(read_file(base + "/cgroup.subtree_control").find("hugetlb") != std::string::npos,
                     "hugetlb not handed on by base");
              expect(read_file(parent + "/node0/cgroup.controllers").find("hugetlb") != std::string::npos,
                     "node0 has no hugetlb");
            } else {
              expect(cgroups.dir(0, "hugetlb").empty(), "hugetlb though base is shared");
              expect(cgroups.why_missing("hugetlb").find("holds other processes") != std::string::npos,
                     "reason: " + cgroups.why_missing("hugetlb"));
              expect(own_line() == base_rel, "moved though base is shared");
              expect(cgroups.dir(0, "freezer") == parent + "/node0", "no freezer node directory");
            }
          }
          expect(own_line() == base_rel, "not moved back: " + own_line());
          expect(read_file(base + "/cgroup.subtree_control").find("hugetlb") == std::string::npos,
                 "hugetlb still on in base");
          expect(!fs::exists(parent), "run cgroup left");
          expect(journal.pending() == 0, "journal entries pending");
        }
      } catch (const std::exception& e) {
        wrong << "threw: " << e.what() << "\n";
      }
      std::ofstream(report) << wrong.str();
      ::_exit(wrong.str().empty() ? 0 : 1);
    }
    int status = 0;
    ::waitpid(child, &status, 0);
    INFO(read_file(report));
    CHECK((WIFEXITED(status) && WEXITSTATUS(status) == 0));
  };

  SECTION("alone in its cgroup") { run_harness(unique_run_id("v2alone"), false); }
  SECTION("sharing its cgroup with another process") {
    pid_t other = ::fork();
    if (other == 0) {
      ::execl("/bin/sleep", "sleep", "60", static_cast<char*>(nullptr));
      ::_exit(127);
    }
    std::ofstream(base + "/cgroup.procs") << other;
    run_harness(unique_run_id("v2shared"), true);
    ::kill(other, SIGKILL);
    ::waitpid(other, nullptr, 0);
  }
}

TEST_CASE("node cgroups v2: a run on the host's cgroup2 hierarchy pauses, kills, restarts and leaves nothing",
          "[node-faults]") {
  const std::string own = host_v2_cgroup();
  if (own.empty()) return;
  ScopedEnv v2("CHAOSBENCH_CGROUP_VERSION", "2");
  TempDir dir;
  // The restart due while node 0 is frozen waits for the thaw (the runner reads cgroup.freeze).
  dir.write("s.json", R"({"schema_version": 1, "name": "v2-restart-frozen", "cluster": {"nodes": 2},
    "workload": {"kind": "command", "argv": ["/bin/sh", "-c", "sleep 3"]},
    "faults": [{"name": "boom", "type": "node.kill", "target": {"nodes": [0]}, "at": "300ms", "restart_after": "500ms"},
               {"name": "hang", "type": "node.pause", "target": {"nodes": [0]}, "at": "600ms", "duration": "1s"}]})");
  auto r = run_command({binary(), "run", dir.file("s.json"), "--out", dir.file("out"), "--quiet"}, 60s);
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  auto results = nlohmann::json::parse(read_file(dir.file("out/results.json")));
  CHECK_THAT(results["environment"]["cluster"].get<std::string>(), Catch::Contains("node cgroups (v2: freezer, pids)"));
  CHECK(results["faults"][1]["backend"] == "freezer cgroup (v2 cgroup.freeze)");
  bool restarted = false;
  for (const auto& p : results["processes"])
    if (p["restart"] == 1) {
      restarted = true;
      CHECK(p["started_at_s"].get<double>() >= 1.55);  // after the thaw at 1.6 s
      CHECK(p["exit_code"] == 0);
    }
  CHECK(restarted);
  CHECK_FALSE(fs::exists(own + "/chaosbench-" + results["run_id"].get<std::string>()));

  // cpu is bound to v1 here: a throttle exits 3 before anything starts, saying why.
  if (read_file(own + "/cgroup.controllers").find("cpu") == std::string::npos) {
    dir.write("t.json", R"({"schema_version": 1, "name": "v2-throttle", "cluster": {"nodes": 1},
      "workload": {"kind": "command", "argv": ["true"]},
      "faults": [{"type": "node.cpu_throttle", "target": {"nodes": [0]}, "at": "1s", "duration": "1s", "cpus": 0.5}]})");
    auto t = run_command({binary(), "run", dir.file("t.json"), "--out", dir.file("out2"), "--quiet"}, 60s);
    CHECK(t.exit_code == 3);
    CHECK_THAT(t.err, Catch::Contains("the cpu controller is not available to chaosbench's cgroup " + own));
  }
}

TEST_CASE("node cgroups v2: after SIGKILL of the harness, cleanup removes its v2 node cgroups", "[node-faults]") {
  const std::string own = host_v2_cgroup();
  if (own.empty()) return;
  ScopedEnv v2("CHAOSBENCH_CGROUP_VERSION", "2");
  TempDir dir;
  ScopedEnv journals("CHAOSBENCH_JOURNAL_DIR", dir.file("journals"));
  dir.write("s.json", R"({"schema_version": 1, "name": "v2-crash", "cluster": {"nodes": 2},
    "workload": {"kind": "command", "argv": ["/bin/sh", "-c", "sleep 300 & sleep 300"]},
    "faults": [{"name": "hang", "type": "node.pause", "target": {"nodes": [1]}, "at": "500ms", "duration": "10s"}]})");
  static std::chrono::milliseconds kill_after;
  for (auto point : {250ms, 900ms}) {  // before the pause, and with node 1 frozen
    INFO("killed after " << point.count() << " ms");
    kill_after = point;
    auto r = run_command({binary(), "run", dir.file("s.json"), "--out", dir.file("out"), "--quiet"}, 30s, [](int pid) {
      std::thread([pid] {
        std::this_thread::sleep_for(kill_after);
        ::kill(pid, SIGKILL);
      }).detach();
    });
    REQUIRE(r.exit_code == -1);
    std::vector<std::string> cgroup_dirs;
    for (const auto& j : scan_journals(dir.file("journals")))
      for (const auto& e : j.pending)
        if (e.kind == "cgroup") cgroup_dirs.push_back(e.fields.at("path"));
    REQUIRE_FALSE(cgroup_dirs.empty());
    for (const auto& d : cgroup_dirs) CHECK(d.starts_with(own + "/chaosbench-"));
    auto c = run_command({binary(), "cleanup"}, 30s);
    INFO(c.out << c.err);
    CHECK(c.exit_code == 0);
    for (const auto& d : cgroup_dirs) CHECK_FALSE(fs::exists(d));
    CHECK(scan_journals(dir.file("journals")).empty());
    fs::remove_all(dir.file("out"));
  }
}

}  // namespace node_cgroups_v2_test
