// Scenario input a user did not mean as code: placeholders inside `sh -c`, NUL bytes,
// a scenario file changed or swapped for a FIFO while chaosbench reads it.
#include <catch2/catch.hpp>

#include <filesystem>
#include <sys/stat.h>

#include "harness/scenario/placeholders.h"
#include "harness/scenario/scenario_loader.h"
#include "tests/support/test_util.h"

namespace scenario_hardening_test {  // this file's names, apart in a unity batch (tests/CMakeLists.txt)

using namespace chaosbench;
using namespace std::chrono_literals;
using test::binary;
using test::read_file;
using test::run_command;
using test::TempDir;

TEST_CASE("placeholders: {name:sh} is one shell word whatever the value holds", "[hardening]") {
  auto lookup = [](std::string_view) { return std::string("a'b $(touch x) \"c\""); };
  CHECK(harness::expand_placeholders("echo {out:sh}", lookup) == "echo 'a'\\''b $(touch x) \"c\"'");
  CHECK(harness::expand_placeholders("{out}", lookup) == "a'b $(touch x) \"c\"");
  CHECK_FALSE(harness::check_placeholders("{out:sh} {node.0.addr:sh}", 1));
  CHECK(harness::check_placeholders("{nope:sh}", 1));
}

TEST_CASE("placeholders: an --out whose name is shell code runs no code through {out:sh}", "[hardening]") {
  TempDir dir;
  dir.write("s.json", R"({"schema_version": 1, "name": "quoted",
    "workload": {"kind": "command", "argv": ["/bin/sh", "-c", "ls -d {out:sh}"]}})");
  const std::string out = dir.file("o'$(touch PWNED)'");
  auto r = run_command({binary(), "run", dir.file("s.json"), "--out", out, "--quiet"}, 60s);
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  CHECK_FALSE(std::filesystem::exists(dir.file("PWNED")));
  CHECK_FALSE(std::filesystem::exists("PWNED"));
  CHECK(read_file(out + "/logs/rank0.out") == out + "\n");
}

TEST_CASE("scenario: a NUL byte in argv, env or cwd is refused at validation with its path", "[hardening]") {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {R"("argv": ["/bin/echo", "a\u0000b"])", "workload.argv[1]"},
      {R"("argv": ["/bin/true"], "env": {"A": "x\u0000y"})", "workload.env.A"},
      {R"("argv": ["/bin/true"], "env": {"A\u0000B": "x"})", "workload.env"},
      {R"("argv": ["/bin/true"], "cwd": "/tmp\u0000/x")", "workload.cwd"}};
  for (const auto& [workload, path] : cases) {
    INFO(workload);
    const std::string text = R"({"schema_version": 1, "name": "nul", "workload": {"kind": "command", )" + workload + "}}";
    try {
      harness::parse_scenario(text, "s.json");
      FAIL("accepted");
    } catch (const harness::ScenarioError& e) {
      CHECK_THAT(std::string(e.what()), Catch::Contains(path));
      CHECK_THAT(std::string(e.what()), Catch::Contains("NUL"));
    }
  }
}

TEST_CASE("scenario: one from a pipe (<(...)) is read, a device is refused at once", "[hardening]") {
  TempDir dir;
  dir.write("s.json", R"({"schema_version": 1, "name": "piped", "workload": {"kind": "command", "argv": ["true"]}})");
  auto piped = run_command({"/bin/bash", "-c", "'" + binary() + "' validate <(cat '" + dir.file("s.json") + "')"}, 20s);
  INFO(piped.err);
  CHECK(piped.exit_code == 0);
  for (const char* device : {"/dev/zero", "/dev/null"}) {
    auto r = run_command({binary(), "validate", device}, 20s);
    CHECK_FALSE(r.timed_out);
    CHECK(r.exit_code == 2);
    CHECK_THAT(r.err + r.out, Catch::Contains("neither a regular file nor a pipe"));
  }
}

TEST_CASE("sweep: the scenario is read once, so a file changed mid-sweep changes no point", "[hardening]") {
  TempDir dir;
  // The first point's workload ruins the scenario file; the second still runs as written.
  dir.write("s.json", R"({"schema_version": 1, "name": "once",
    "workload": {"kind": "command", "argv": ["/bin/sh", "-c", "echo broken > {scenario_dir:sh}/s.json"],
                 "env": {"POINT": "a"}},
    "sweep": {"workload.env.POINT": ["a", "b"]}})");
  auto r = run_command({binary(), "run", dir.file("s.json"), "--out", dir.file("out"), "--quiet"}, 90s);
  INFO(r.err);
  CHECK(read_file(dir.file("s.json")) == "broken\n");
  for (const char* point : {"out/point-01/results.json", "out/point-02/results.json"})
    CHECK_THAT(read_file(dir.file(point)), Catch::Contains("\"verdict\": \"pass\""));
  CHECK_THAT(read_file(dir.file("out/sweep.md")), Catch::Contains("| POINT=b | pass |"));
}

}  // namespace scenario_hardening_test
