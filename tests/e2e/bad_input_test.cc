// Bad input never crashes or hangs: truncated, mistyped, huge, deeply nested and binary
// files each give exit 2 and a message within seconds.
#include <catch2/catch.hpp>

#include <fstream>
#include <random>

#include "test_util.h"

namespace bad_input_test {  // this file's names, apart in a unity batch (tests/CMakeLists.txt)

using namespace chaosbench::test;
using namespace std::chrono_literals;

namespace {

CommandResult validate(const std::string& file) { return run_command({binary(), "validate", file}, 20s); }

void check_rejected(const CommandResult& r, const std::string& file) {
  INFO(r.err);
  CHECK_FALSE(r.timed_out);
  CHECK(r.exit_code == 2);
  CHECK(r.seconds < 5.0);
  CHECK_THAT(r.err, Catch::StartsWith(file + ":"));
}

}  // namespace

TEST_CASE("bad input: truncated and mistyped files exit 2 with a located message", "[bad-input]") {
  TempDir dir;
  std::string good = read_file(source("scenarios/demo.json"));
  for (std::size_t cut : {std::size_t{1}, good.size() / 3, good.size() / 2, good.size() - 2}) {
    dir.write("t.json", good.substr(0, cut));
    check_rejected(validate(dir.file("t.json")), dir.file("t.json"));
  }
  dir.write("m.json", R"({"schema_version": "1", "name": 5, "cluster": [], "workload": "collective", "faults": {}})");
  auto r = validate(dir.file("m.json"));
  check_rejected(r, dir.file("m.json"));
  CHECK_THAT(r.err, Catch::Contains("schema_version") && Catch::Contains("cluster") && Catch::Contains("faults"));
  dir.write("empty.json", "");
  check_rejected(validate(dir.file("empty.json")), dir.file("empty.json"));
}

TEST_CASE("bad input: a 100 MB file is refused at once", "[bad-input]") {
  TempDir dir;
  {
    std::ofstream out(dir.file("huge.json"), std::ios::binary);
    std::string chunk(1 << 20, ' ');
    chunk.front() = '[';
    out << chunk;
    chunk.front() = ' ';
    for (int i = 1; i < 100; ++i) out << chunk;
    out << "]";
  }
  auto r = validate(dir.file("huge.json"));
  check_rejected(r, dir.file("huge.json"));
  CHECK_THAT(r.err, Catch::Contains("at most"));
}

TEST_CASE("bad input: 100k levels of nesting are refused without recursion", "[bad-input]") {
  TempDir dir;
  dir.write("deep.json", std::string(100000, '[') + std::string(100000, ']'));
  auto r = validate(dir.file("deep.json"));
  check_rejected(r, dir.file("deep.json"));
  CHECK_THAT(r.err, Catch::Contains("nesting deeper than"));
  dir.write("deep-object.json", "{\"a\":" + std::string(100000, '[') + "1" + std::string(100000, ']') + "}");
  check_rejected(validate(dir.file("deep-object.json")), dir.file("deep-object.json"));
}

TEST_CASE("bad input: binary garbage and invalid UTF-8 are refused", "[bad-input]") {
  TempDir dir;
  std::mt19937 rng(7);
  std::string bytes(4096, '\0');
  for (auto& b : bytes) b = static_cast<char>(rng());
  dir.write("bin.json", bytes);
  check_rejected(validate(dir.file("bin.json")), dir.file("bin.json"));
  dir.write("utf8.json", "{\"schema_version\": 1, \"name\": \"\xff\xfe\"}");
  check_rejected(validate(dir.file("utf8.json")), dir.file("utf8.json"));
  dir.write("nul.json", std::string("{\"a\"\0:1}", 8));
  check_rejected(validate(dir.file("nul.json")), dir.file("nul.json"));
}

TEST_CASE("bad input: missing files and directories exit 2", "[bad-input]") {
  TempDir dir;
  check_rejected(validate(dir.file("nope.json")), dir.file("nope.json"));
  check_rejected(validate(dir.path()), dir.path());
  auto r = run_command({binary(), "run", dir.file("nope.json")}, 20s);
  CHECK(r.exit_code == 2);
  auto u = run_command({binary(), "run", "--bogus"}, 20s);
  CHECK(u.exit_code == 2);
  auto c = run_command({binary(), "frobnicate"}, 20s);
  CHECK(c.exit_code == 2);
}

}  // namespace bad_input_test
