// The output directory under hostile set-ups: root writes only into a directory nobody
// else can change, and links planted in it are replaced, never written through.
#include <catch2/catch.hpp>

#include <cstdlib>
#include <filesystem>
#include <sys/stat.h>
#include <unistd.h>

#include "common/files/safe_files.h"
#include "common/files/trusted_directory.h"
#include "tests/support/test_util.h"

namespace output_directory_test {  // this file's names, apart in a unity batch (tests/CMakeLists.txt)

using namespace chaosbench;
using namespace std::chrono_literals;
using test::binary;
using test::read_file;
using test::run_command;
using test::TempDir;

namespace {

constexpr uid_t kNobody = 65534;

// A command workload that prints one line and exits at once.
void write_quick_scenario(const TempDir& dir) {
  dir.write("s.json", R"({"schema_version": 1, "name": "quick",
    "workload": {"kind": "command", "argv": ["/bin/sh", "-c", "echo hello from $RANK"]}})");
}

test::CommandResult run_into(const TempDir& dir, const std::string& out) {
  return run_command({binary(), "run", dir.file("s.json"), "--out", out, "--quiet"}, 60s);
}

// A root-only file standing for /etc/shadow: a planted link points at it.
std::string make_victim(const TempDir& dir, const std::string& name) {
  dir.write(name, "secret\n");
  ::chmod(dir.file(name).c_str(), 0600);
  return dir.file(name);
}

// Run under sudo (SUDO_GID set), new directories are set-group-ID: the mode tests want
// the plain case, so they hide it while they run.
class WithoutSudoGid {
 public:
  WithoutSudoGid() {
    if (const char* v = std::getenv("SUDO_GID")) saved_ = v;
    ::unsetenv("SUDO_GID");
  }
  ~WithoutSudoGid() {
    if (!saved_.empty()) ::setenv("SUDO_GID", saved_.c_str(), 1);
  }

 private:
  std::string saved_;
};

mode_t mode_of(const std::string& path) {
  struct stat st {};
  REQUIRE(::lstat(path.c_str(), &st) == 0);
  return st.st_mode;
}

}  // namespace

TEST_CASE("output directory: one owned by someone else, writable by others, or a link is refused (exit 3)", "[hardening][root]") {
  if (test::skip_without_root("chown needs root")) return;
  TempDir dir;
  write_quick_scenario(dir);
  const std::string others = dir.file("others"), open_to_all = dir.file("open"), link = dir.file("link");
  REQUIRE(::mkdir(others.c_str(), 0755) == 0);
  REQUIRE(::chown(others.c_str(), kNobody, kNobody) == 0);
  REQUIRE(::mkdir(open_to_all.c_str(), 0700) == 0);
  REQUIRE(::chmod(open_to_all.c_str(), 0777) == 0);
  REQUIRE(::symlink(dir.path().c_str(), link.c_str()) == 0);
  const std::string under_others = others + "/out";  // new, but in a directory nobody owns
  const std::vector<std::pair<std::string, std::string>> cases = {
      {others, "owned by uid 65534"}, {open_to_all, "writable by everyone"},
      {link, "symbolic link"}, {under_others, "owned by uid 65534, who could replace it"}};
  for (const auto& [out, why] : cases) {
    INFO(out);
    auto r = run_into(dir, out);
    CHECK(r.exit_code == 3);
    CHECK_THAT(r.err, Catch::Contains(why));
    CHECK_FALSE(std::filesystem::exists(out + "/timeline.jsonl"));
  }
  // The same directory, once only root can change it, is accepted.
  REQUIRE(::chown(others.c_str(), 0, 0) == 0);
  auto r = run_into(dir, others);
  INFO(r.err);
  CHECK(r.exit_code == 0);
}

TEST_CASE("output directory: links planted under the names a run writes are replaced, never written through",
          "[hardening]") {
  TempDir dir;
  write_quick_scenario(dir);
  const std::string out = dir.file("out");
  REQUIRE(::mkdir(out.c_str(), 0750) == 0);
  REQUIRE(::mkdir((out + "/logs").c_str(), 0750) == 0);
  const std::vector<std::string> names = {"timeline.jsonl", "results.json", "report.html", "summary.md",
                                          "junit.xml", "logs/rank0.out", "logs/rank0.err"};
  for (std::size_t i = 0; i < names.size(); ++i) {
    const std::string victim = make_victim(dir, "victim" + std::to_string(i));
    REQUIRE(::symlink(victim.c_str(), (out + "/" + names[i]).c_str()) == 0);
  }
  auto r = run_into(dir, out);
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  for (std::size_t i = 0; i < names.size(); ++i) {
    INFO(names[i]);
    CHECK(read_file(dir.file("victim" + std::to_string(i))) == "secret\n");
    CHECK(S_ISREG(mode_of(out + "/" + names[i])));
  }
  CHECK(read_file(out + "/logs/rank0.out") == "hello from 0\n");
}

TEST_CASE("output directory: a fresh one is 0750 and what the run writes has its own mode, whatever the umask",
          "[hardening]") {
  TempDir dir;
  write_quick_scenario(dir);
  WithoutSudoGid plain;
  const mode_t saved = ::umask(0);  // the child inherits it
  auto r = run_into(dir, dir.file("out"));
  ::umask(saved);
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  CHECK((mode_of(dir.file("out")) & 07777) == 0750);
  CHECK((mode_of(dir.file("out/logs")) & 07777) == 0750);
  CHECK((mode_of(dir.file("out/timeline.jsonl")) & 07777) == 0640);
  CHECK((mode_of(dir.file("out/logs/rank0.out")) & 07777) == 0640);
  CHECK((mode_of(dir.file("out/results.json")) & 07777) == 0644);
}

TEST_CASE("safe files: the atomic write leaves no temporary behind, names it unpredictably and replaces a link",
          "[hardening]") {
  TempDir dir;
  const std::string victim = make_victim(dir, "victim");
  REQUIRE(::symlink(victim.c_str(), dir.file("target").c_str()) == 0);
  REQUIRE(common::write_file_atomically(dir.file("target"), "new\n", 0600).empty());
  CHECK(read_file(victim) == "secret\n");
  CHECK(read_file(dir.file("target")) == "new\n");
  CHECK((mode_of(dir.file("target")) & 07777) == 0600);
  CHECK(std::distance(std::filesystem::directory_iterator(dir.path()), {}) == 2);  // victim, target
  CHECK(common::random_hex(12) != common::random_hex(12));
  // Exactly one of two writers of the same new name wins.
  CHECK(common::write_file_once(dir.file("once"), "first").empty());
  CHECK(common::write_file_once(dir.file("once"), "second") == "EEXIST");
  CHECK(read_file(dir.file("once")) == "first");
}

TEST_CASE("safe files: reading refuses a FIFO at once instead of blocking", "[hardening]") {
  TempDir dir;
  REQUIRE(::mkfifo(dir.file("fifo").c_str(), 0600) == 0);
  std::string text;
  CHECK_THAT(common::read_regular_file(dir.file("fifo"), text, 1 << 20), Catch::Contains("not a regular file"));
  dir.write("big", std::string(100, 'x'));
  CHECK_THAT(common::read_regular_file(dir.file("big"), text, 10), Catch::Contains("larger than 10 bytes"));
  CHECK(common::read_regular_file(dir.file("big"), text, 100).empty());
  CHECK(text.size() == 100);
}

TEST_CASE("trusted directory: existing directories are judged, missing ones made with the mode asked for",
          "[hardening]") {
  TempDir dir;
  WithoutSudoGid plain;
  const mode_t saved = ::umask(077);
  const std::string why = common::make_trusted_directory(dir.file("a/b/c"), 0750);
  ::umask(saved);
  CHECK(why.empty());
  CHECK((mode_of(dir.file("a/b/c")) & 07777) == 0750);
  REQUIRE(::chmod(dir.file("a/b").c_str(), 0777) == 0);
  CHECK_THAT(common::check_trusted_directory(dir.file("a/b/c")), Catch::Contains("which others may write"));
  REQUIRE(::chmod(dir.file("a/b").c_str(), 01777) == 0);  // sticky, like /tmp: others cannot rename c
  CHECK(common::check_trusted_directory(dir.file("a/b/c")).empty());
  dir.write("file", "");
  CHECK_THAT(common::make_trusted_directory(dir.file("file")), Catch::Contains("not a directory"));
}

TEST_CASE("trusted directory: a link on the way is judged where it stands as well as where it leads", "[hardening][root]") {
  if (test::skip_without_root("chown needs root")) return;
  TempDir dir;
  const std::string others = dir.file("others");
  REQUIRE(::mkdir(others.c_str(), 0755) == 0);
  REQUIRE(::symlink(dir.path().c_str(), (others + "/latest").c_str()) == 0);  // to a root-owned tree
  REQUIRE(::chown(others.c_str(), kNobody, kNobody) == 0);
  // uid 65534 could point `latest` at /etc mid-run: refused, with the way out named.
  CHECK_THAT(common::make_trusted_directory(others + "/latest/out"),
             Catch::Contains("owned by uid 65534") && Catch::Contains("CHAOSBENCH_TRUSTED_UIDS=65534"));
  ::setenv(common::kTrustedUidsEnv, "1000,65534", 1);
  const std::string vouched = common::make_trusted_directory(others + "/latest/out");
  ::unsetenv(common::kTrustedUidsEnv);
  CHECK(vouched.empty());
  // A trailing slash does not carry a link past the "not a link" rule.
  CHECK_THAT(common::check_trusted_directory(others + "/latest/"), Catch::Contains("symbolic link"));
}

TEST_CASE("trusted directory: under sudo a new directory is the sudo user's group to read, and parents are 0755", "[hardening][root]") {
  if (test::skip_without_root("chown needs root")) return;
  TempDir dir;
  ::setenv("SUDO_GID", "65534", 1);
  const mode_t saved = ::umask(002);
  const std::string why = common::make_trusted_directory(dir.file("p/q/out"), 0750);
  ::umask(saved);
  ::unsetenv("SUDO_GID");
  REQUIRE(why.empty());
  struct stat st {};
  REQUIRE(::stat(dir.file("p/q/out").c_str(), &st) == 0);
  CHECK(st.st_gid == 65534);
  CHECK((st.st_mode & 07777) == 02750);
  CHECK((mode_of(dir.file("p")) & 07777) == 0755);
  CHECK((mode_of(dir.file("p/q")) & 07777) == 0755);
}

}  // namespace output_directory_test
