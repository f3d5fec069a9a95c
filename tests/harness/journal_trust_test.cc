// The security review (docs/security.md): what `chaosbench cleanup` believes, where journals live, what
// a failed append leaves, and which processes cleanup may kill. Each case reproduces a
// finding with real files, directories and processes.
#include <catch2/catch.hpp>

#include <csignal>
#include <filesystem>
#include <fstream>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "harness/core/host_error.h"
#include "harness/journal/journal.h"
#include "harness/journal/journal_directory.h"
#include "harness/journal/journal_reader.h"
#include "harness/journal/process_identity.h"
#include "test_util.h"

namespace journal_trust_test {  // this file's names, apart in a unity batch (tests/CMakeLists.txt)

using namespace chaosbench::test;
using namespace chaosbench::harness;
using namespace std::chrono_literals;
namespace fs = std::filesystem;

namespace {

// A journal of a dead owner (no pid is above INT_MAX's neighbourhood of pid_max).
std::string owner_line(const std::string& run_id) {
  return "{\"journal\":1,\"run_id\":\"" + run_id + "\",\"pid\":2147483000,\"start_time\":1,\"out\":\"o\"}\n";
}

std::string path_record(int id, const std::string& path) {
  return "{\"id\":" + std::to_string(id) + ",\"op\":\"record\",\"kind\":\"path\",\"path\":\"" + path + "\"}\n";
}

void write_mode(const std::string& path, const std::string& text, mode_t mode) {
  std::ofstream(path, std::ios::binary) << text;
  REQUIRE(::chmod(path.c_str(), mode) == 0);
}

CommandResult cleanup(const std::string& journals) {
  return run_command({binary(), "cleanup", "--journal-dir", journals}, 30s);
}

}  // namespace

TEST_CASE("cleanup: only its user's journals, and only what their run created, are undone", "[cleanup][journal][root]") {
  if (skip_without_root("chown to another user needs root")) return;
  TempDir dir;
  const std::string journals = dir.file("journals");
  fs::create_directory(journals);
  fs::permissions(journals, fs::perms::owner_all, fs::perm_options::replace);
  const std::string runtime = "/tmp/chaosbench-jtgood" + std::to_string(::getpid());
  fs::create_directory(runtime);
  for (const char* victim : {"victim1", "victim2", "victim3", "victim4"}) dir.write(victim, "x");
  // Sorted first: a wrongly typed owner line once threw out of cleanup.
  write_mode(journals + "/0bad.journal", "{\"journal\":1,\"run_id\":\"0bad\",\"pid\":\"12\",\"start_time\":1,\"out\":\"o\"}\n",
             0600);
  write_mode(journals + "/1garbage.journal", owner_line("1garbage") + "\x01\xff{{{\n" + path_record(2, dir.file("victim4")),
             0600);
  const std::string good = "jtgood" + std::to_string(::getpid());
  write_mode(journals + "/" + good + ".journal", owner_line(good) + path_record(1, runtime), 0600);
  write_mode(journals + "/evil.journal", owner_line("evil") + path_record(1, dir.file("victim1")), 0600);
  write_mode(journals + "/groupw.journal", owner_line("groupw") + path_record(1, "/tmp/chaosbench-groupw"), 0620);
  write_mode(journals + "/other.journal", owner_line("other") + path_record(1, dir.file("victim2")), 0600);
  REQUIRE(::chown((journals + "/other.journal").c_str(), 65534, 65534) == 0);
  write_mode(dir.file("target"), owner_line("link") + path_record(1, dir.file("victim3")), 0600);
  fs::create_symlink(dir.file("target"), journals + "/link.journal");
  fs::create_directory("/tmp/chaosbench-groupw");

  auto c = cleanup(journals);
  INFO(c.out << c.err);
  fs::remove_all("/tmp/chaosbench-groupw");
  CHECK(c.exit_code == 1);           // something was not cleaned
  CHECK_FALSE(fs::exists(runtime));  // the good journal was processed despite the bad ones
  CHECK_FALSE(fs::exists(journals + "/" + good + ".journal"));
  for (const char* victim : {"victim1", "victim2", "victim3", "victim4"}) CHECK(fs::exists(dir.file(victim)));
  CHECK_THAT(c.out, Catch::Contains("0bad.journal:1: expected \"pid\""));
  CHECK_THAT(c.out, Catch::Contains("1garbage.journal:2: expected JSON"));
  CHECK_THAT(c.out, Catch::Contains("is not the run's runtime directory /tmp/chaosbench-evil"));
  CHECK_THAT(c.out, Catch::Contains("groupw.journal: writable by others"));
  CHECK_THAT(c.out, Catch::Contains("other.journal: owned by uid 65534"));
  CHECK_THAT(c.out, Catch::Contains("link.journal: not a regular file"));
  CHECK(fs::exists(journals + "/evil.journal"));  // kept, for a person to look at
}

TEST_CASE("cleanup: a journal directory others may write is not trusted at all", "[cleanup][journal]") {
  TempDir dir;
  const std::string journals = dir.file("journals");
  fs::create_directory(journals);
  fs::permissions(journals, fs::perms::all, fs::perm_options::replace);  // 0777
  dir.write("victim", "x");
  write_mode(journals + "/evil.journal", owner_line("evil") + path_record(1, dir.file("victim")), 0600);
  auto c = cleanup(journals);
  INFO(c.out << c.err);
  CHECK(c.exit_code == 1);
  CHECK_THAT(c.out, Catch::Contains("not trusted"));
  CHECK(fs::exists(dir.file("victim")));
}

TEST_CASE("journal: a directory that is not this user's alone is refused", "[journal][root]") {
  if (skip_without_root("chown to another user needs root")) return;
  TempDir dir;
  // Another user made the predictable directory first, open to all.
  const std::string planted = dir.file("chaosbench-journal-0");
  fs::create_directory(planted);
  REQUIRE(::chown(planted.c_str(), 65534, 65534) == 0);
  REQUIRE(::chmod(planted.c_str(), 0777) == 0);
  try {
    Journal j(planted, "r", "o");
    FAIL("a journal was created in a directory owned by uid 65534");
  } catch (const HostError& e) {
    CHECK_THAT(e.what(), Catch::Contains(planted) && Catch::Contains("owned by uid 65534"));
  }
  CHECK(fs::is_empty(planted));
  // Ours but open to others: refused too, with what to do.
  const std::string wide = dir.file("wide");
  fs::create_directory(wide);
  REQUIRE(::chmod(wide.c_str(), 0755) == 0);
  CHECK_THROWS_WITH(Journal(wide, "r", "o"), Catch::Contains("chmod 700"));
  // $XDG_RUNTIME_DIR only when it is the user's with mode 0700.
  const std::string xdg = dir.file("xdg");
  fs::create_directory(xdg);
  REQUIRE(::chown(xdg.c_str(), 1234, 1234) == 0);
  REQUIRE(::chmod(xdg.c_str(), 0700) == 0);
  CHECK(choose_journal_directory(1234, nullptr, xdg.c_str()) == xdg + "/chaosbench");
  CHECK(choose_journal_directory(1235, nullptr, xdg.c_str()) == "/tmp/chaosbench-journal-1235");
  REQUIRE(::chmod(xdg.c_str(), 0755) == 0);
  CHECK(choose_journal_directory(1234, nullptr, xdg.c_str()) == "/tmp/chaosbench-journal-1234");
  CHECK(choose_journal_directory(0, nullptr, xdg.c_str()) == "/run/chaosbench");
}

TEST_CASE("journal: a partial append fails loudly and the next record is still read", "[journal]") {
  TempDir dir;
  int pipe_fds[2];
  REQUIRE(::pipe(pipe_fds) == 0);
  const pid_t child = ::fork();
  REQUIRE(child >= 0);
  if (child == 0) {
    // A real short write: RLIMIT_FSIZE stops it 10 bytes into the line (EFBIG, not SIGXFSZ).
    ::signal(SIGXFSZ, SIG_IGN);
    auto* j = new Journal(dir.path(), "partial", "o");  // never destroyed: the file stays
    struct stat st {};
    ::stat(j->path().c_str(), &st);
    rlimit small{static_cast<rlim_t>(st.st_size + 10), RLIM_INFINITY};
    ::setrlimit(RLIMIT_FSIZE, &small);
    int code = 0;
    try {
      j->record_path("/tmp/chaosbench-partial/first");
      code |= 1;  // the record that is not durable must not return
    } catch (const HostError&) {
    }
    rlimit big{RLIM_INFINITY, RLIM_INFINITY};
    ::setrlimit(RLIMIT_FSIZE, &big);
    try {
      j->record_path("/tmp/chaosbench-partial/second");
    } catch (const HostError&) {
      code |= 2;
    }
    ::_exit(code);
  }
  int status = 0;
  REQUIRE(::waitpid(child, &status, 0) == child);
  REQUIRE(WIFEXITED(status));
  CHECK((WEXITSTATUS(status) & 1) == 0);
  CHECK((WEXITSTATUS(status) & 2) == 0);
  const std::string text = read_file(dir.file("partial.journal"));
  INFO(text);
  CHECK(text.ends_with("\n"));
  auto j = read_journal(dir.file("partial.journal"));
  CHECK(j.error.empty());
  REQUIRE(j.pending.size() == 1);
  CHECK(j.pending[0].fields.at("path") == "/tmp/chaosbench-partial/second");
}

namespace {

// A `sleep` left in a process group whose leader has exited, as a dead rank's child is;
// with `marker` it carries a run's marker in its environment. Returns its pid; its group
// is `*pgid`.
pid_t leaderless_sleeper(pid_t* pgid, const char* marker) {
  int fds[2];
  REQUIRE(::pipe(fds) == 0);
  const pid_t leader = ::fork();
  REQUIRE(leader >= 0);
  if (leader == 0) {
    ::setpgid(0, 0);
    const pid_t member = ::fork();
    if (member == 0) {
      if (marker) ::setenv("CHAOSBENCH_RUN_MARKER", marker, 1);
      ::execl("/bin/sleep", "sleep", "60", nullptr);
      ::_exit(127);
    }
    (void)!::write(fds[1], &member, sizeof member);
    ::_exit(0);
  }
  ::close(fds[1]);
  pid_t member = -1;
  REQUIRE(::read(fds[0], &member, sizeof member) == sizeof member);
  ::close(fds[0]);
  ::waitpid(leader, nullptr, 0);
  *pgid = leader;
  return member;
}

bool running(pid_t pid) {
  auto st = read_proc_stat(pid);
  return st && st->state != 'Z';
}

std::string group_record(int id, pid_t pgid, const std::string& start, const std::string& marker) {
  return "{\"id\":" + std::to_string(id) + ",\"op\":\"record\",\"kind\":\"process_group\",\"pgid\":\"" +
         std::to_string(pgid) + "\",\"start_time\":\"" + start + "\"" +
         (marker.empty() ? "" : ",\"marker\":\"" + marker + "\"") + "}\n";
}

}  // namespace

TEST_CASE("cleanup: a leaderless process group is killed only where its members are verified", "[cleanup][journal]") {
  TempDir dir;
  const std::string journals = dir.file("journals");
  fs::create_directory(journals);
  fs::permissions(journals, fs::perms::owner_all, fs::perm_options::replace);
  // A stranger's group took the number of a dead run's group; its member started after
  // the recorded leader (start time 1), and has no marker of the run.
  pid_t stranger_group = 0, ours_group = 0;
  const pid_t stranger = leaderless_sleeper(&stranger_group, nullptr);
  const pid_t ours = leaderless_sleeper(&ours_group, "0123456789abcdef");
  write_mode(journals + "/pids.journal",
             owner_line("pids") + group_record(1, stranger_group, "1", "fedcba9876543210") +
                 group_record(2, stranger_group, "0", "") + group_record(3, ours_group, "1", "0123456789abcdef") +
                 // A cgroup that is not the run's vouches for nobody (the host's root holds everyone).
                 "{\"id\":4,\"op\":\"record\",\"kind\":\"process_group\",\"pgid\":\"" + std::to_string(stranger_group) +
                 "\",\"start_time\":\"1\",\"cgroup\":\"/sys/fs/cgroup/pids\"}\n",
             0600);
  auto c = cleanup(journals);
  INFO(c.out << c.err);
  CHECK(running(stranger));    // neither the wrong marker nor start time 0 lets it be killed
  CHECK_FALSE(running(ours));  // the run's orphan (its marker) is
  CHECK(c.exit_code == 1);     // and what was left alone is reported
  CHECK_THAT(c.out, Catch::Contains("left alone process " + std::to_string(stranger)));
  CHECK_THAT(c.out, Catch::Contains("cannot be verified"));
  CHECK_THAT(c.out, Catch::Contains("/sys/fs/cgroup/pids is not run pids's cgroup"));
  ::kill(stranger, SIGKILL);
  ::kill(ours, SIGKILL);
}

}  // namespace journal_trust_test
