// Files a rank or another run could have crafted: a fault control block cut short, a
// checkpoint whose header asks for gigabytes, a FIFO named like a checkpoint, a results
// file nested 100,000 deep. Each must be refused or survived, never crash or hang.
#include <catch2/catch.hpp>

#include <cstring>
#include <fcntl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "bench/checkpoint/checkpoint_format.h"
#include "bench/checkpoint/checkpoint_loader.h"
#include "common/files/unique_fd.h"
#include "common/gpu/fault_control.h"
#include "tests/support/test_util.h"

namespace untrusted_files_test {  // this file's names, apart in a unity batch (tests/CMakeLists.txt)

using namespace chaosbench;
using namespace std::chrono_literals;
using test::binary;
using test::run_command;
using test::TempDir;

namespace {

long max_rss_kib() {
  rusage u{};
  ::getrusage(RUSAGE_SELF, &u);
  return u.ru_maxrss;
}

void put_u64(std::string& s, std::size_t at, std::uint64_t v) { std::memcpy(s.data() + at, &v, 8); }

// A 4-element checkpoint whose header, checksum recomputed, claims `elements` elements
// and whose payload is a bare zstd frame header announcing 4 x elements bytes.
std::string crafted_checkpoint(std::uint64_t elements) {
  bench::train::CheckpointState s;
  s.step = 100;
  s.model_key = "mlp 2-2 sgd";
  s.buffers.emplace_back("params", std::vector<float>(4, 1.0f));
  std::string file = bench::train::encode_checkpoint(s, nullptr, 1);
  bench::train::CheckpointHeader h;
  REQUIRE(bench::train::parse_checkpoint_header(file, &h).empty());
  file.resize(h.header_bytes);
  // zstd frame: magic, descriptor (single segment, 8-byte content size), the size, then
  // one last raw block of 0 bytes.
  std::string frame("\x28\xB5\x2F\xFD\xE0", 5);
  frame.append(8, '\0');
  put_u64(frame, 5, 4 * elements);
  frame.append("\x01\x00\x00", 3);
  put_u64(file, 40, 4 * elements);                       // raw bytes
  put_u64(file, 48, frame.size());                       // payload bytes
  put_u64(file, 56, bench::train::checkpoint_xxh64(frame));
  put_u64(file, h.header_bytes - 16, elements);          // the only buffer's element count
  put_u64(file, h.header_bytes - 8, bench::train::checkpoint_xxh64(std::string_view(file).substr(0, h.header_bytes - 8)));
  return file + frame;
}

}  // namespace

TEST_CASE("control block: a rank can neither shrink nor grow its block, so the harness's mapping never faults",
          "[hardening]") {
  TempDir dir;
  const std::string path = dir.file("rank0.ctl");
  common::UniqueFd memfd(common::FaultControl::create(path, 0));
  REQUIRE(memfd);
  auto harness = common::FaultControl::open(path);
  REQUIRE(harness);
  // What a misbehaving rank does with the path it was given.
  common::UniqueFd rank(::open(path.c_str(), O_RDWR | O_CLOEXEC));
  REQUIRE(rank);
  CHECK(::ftruncate(rank.get(), 0) != 0);
  CHECK(errno == EPERM);
  CHECK(::ftruncate(rank.get(), 1 << 20) != 0);
  CHECK(harness->rank() == 0);  // still mapped and readable: no SIGBUS
  common::ArmedFault f;
  CHECK(harness->arm(CB_SLOWDOWN, f) > 0);
}

// The fault is armed at 1 s and reverted at 2 s: the truncation lands while the harness
// has the block mapped (before the seal, the revert died of SIGBUS, exit 135).
TEST_CASE("control block: a run whose rank truncates its block mid-fault still reverts and reports the fault",
          "[hardening]") {
  if (test::skip_without_root("a run needs root")) return;
  TempDir dir;
  dir.write("s.json", R"({"schema_version": 1, "name": "cut", "cluster": {"nodes": 2},
    "workload": {"kind": "command", "argv": ["/bin/sh", "-c",
      "sleep 1.5; truncate -s 0 \"$CHAOSBENCH_FAULT_CONTROL\"; echo cut=$?; sleep 2"]},
    "faults": [{"name": "slow", "type": "gpu.slowdown", "target": {"ranks": [0, 1]}, "at": "1s",
                "duration": "1s", "factor": 3}]})");
  auto r = run_command({binary(), "run", dir.file("s.json"), "--out", dir.file("out"), "--quiet"}, 60s);
  INFO(r.err);
  CHECK(r.exit_code == 0);
  CHECK(test::read_file(dir.file("out/logs/rank0.out")).find("cut=0") == std::string::npos);
  CHECK(test::read_file(dir.file("out/timeline.jsonl")).find("\"fault_reverted\"") != std::string::npos);
}

TEST_CASE("checkpoint: a 140-byte file asking for gigabytes is refused before anything is allocated", "[hardening]") {
  TempDir dir;
  REQUIRE(::mkdir(dir.file("ckpt").c_str(), 0750) == 0);
  const std::string file = crafted_checkpoint(std::uint64_t{1} << 29);  // 2 GiB of floats
  CHECK(file.size() < 200);
  dir.write("ckpt/ckpt-000000100.full", file);
  const long before = max_rss_kib();
  for (std::uint64_t model : {std::uint64_t{4}, std::uint64_t{0}}) {  // with and without the model's size
    std::vector<bench::train::RejectedCheckpoint> rejected;
    CHECK_FALSE(bench::train::load_latest_checkpoint(dir.file("ckpt"), "mlp 2-2 sgd", &rejected, model));
    REQUIRE(rejected.size() == 1);
    CHECK_THAT(rejected[0].reason, Catch::Contains(model ? "the model has 4" : "cannot decompress to"));
  }
  CHECK(max_rss_kib() - before < 64 * 1024);
}

TEST_CASE("checkpoint: a FIFO named like a checkpoint or a manifest is refused without blocking", "[hardening]") {
  TempDir dir;
  REQUIRE(::mkdir(dir.file("ckpt").c_str(), 0750) == 0);
  REQUIRE(::mkfifo(dir.file("ckpt/ckpt-000000100.full").c_str(), 0600) == 0);
  std::vector<bench::train::RejectedCheckpoint> rejected;
  CHECK_FALSE(bench::train::load_latest_checkpoint(dir.file("ckpt"), "mlp 2-2 sgd", &rejected));
  REQUIRE(rejected.size() == 1);
  CHECK(rejected[0].reason == "not a regular file");
  REQUIRE(::mkfifo(dir.file("ckpt/manifest.json").c_str(), 0600) == 0);
  CHECK_FALSE(bench::train::load_latest_checkpoint(dir.file("ckpt"), "mlp 2-2 sgd", &rejected));
}

TEST_CASE("results: report and compare refuse a results file nested 100,000 deep, and a device, with a clear error",
          "[hardening]") {
  TempDir dir;
  std::string deep = R"({"schema_version": 1, "scenario": )" + std::string(100000, '[') + std::string(100000, ']') + "}";
  dir.write("deep.json", deep);
  auto report = run_command({binary(), "report", dir.file("deep.json"), "--out", dir.file("r")}, 30s);
  CHECK(report.exit_code == 2);
  CHECK_THAT(report.err, Catch::Contains("nests deeper than 64 levels"));
  auto compare = run_command({binary(), "compare", dir.file("deep.json"), dir.file("deep.json")}, 30s);
  CHECK(compare.exit_code == 2);
  CHECK_THAT(compare.err, Catch::Contains("nests deeper than 64 levels"));
  auto device = run_command({binary(), "report", "/dev/zero"}, 30s);  // endless: never read
  CHECK_FALSE(device.timed_out);
  CHECK(device.exit_code == 2);
  CHECK_THAT(device.err, Catch::Contains("not a regular file"));
}

}  // namespace untrusted_files_test
