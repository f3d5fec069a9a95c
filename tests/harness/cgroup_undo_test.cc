// The undo of controllers the run enabled in a cgroup it shares with others.
#include <catch2/catch.hpp>

#include <filesystem>

#include "harness/journal/journal.h"
#include "tests/support/test_util.h"

namespace cgroup_undo_test {  // this file's names, apart in a unity batch (tests/CMakeLists.txt)

using namespace chaosbench;
using namespace chaosbench::harness;
using test::read_file;
using test::TempDir;
namespace fs = std::filesystem;

TEST_CASE("node cgroups v2: controllers enabled in a shared parent are left on while others live below it",
          "[hardening]") {
  // The undo alone, on plain files: the rule is about which directories stand beside ours.
  TempDir dir;
  dir.write("cgroup.subtree_control", "+cpu");
  REQUIRE(fs::create_directory(dir.file("chaosbench-r1")));
  REQUIRE(fs::create_directory(dir.file("user.slice")));
  JournalEntry e{1, "write", {{"path", dir.file("cgroup.subtree_control")}, {"value", "-cpu"},
                              {"own_child", "chaosbench-r1"}}};
  CHECK_THAT(undo_entry(e, false), Catch::Contains("other cgroups below it (user.slice)"));
  CHECK(read_file(dir.file("cgroup.subtree_control")) == "+cpu");
  fs::remove(dir.file("user.slice"));
  CHECK_THAT(undo_entry(e, false), Catch::Contains("restored"));
  CHECK(read_file(dir.file("cgroup.subtree_control")) == "-cpu");
}

}  // namespace cgroup_undo_test
