// GPU and collective faults, Path 1 (the built-in workloads' device and communication
// layers, on this CPU machine): the control block as the harness arms it and the
// trainer's fault layer reads it, the replica fingerprint check, the fault units, and
// the scenario rules. End-to-end runs are in gpu_fault_run_test.cc.
#include <catch2/catch.hpp>

#include <chrono>
#include <cstring>
#include <thread>

#include "bench/common/device_error.h"
#include "common/files/unique_fd.h"
#include "bench/common/device_faults.h"
#include "bench/train/replica_check.h"
#include "faults/gpu/gpu_fault.h"
#include "faults/registry/registry.h"
#include "harness/journal/journal.h"
#include "test_util.h"

namespace gpu_faults_test {  // this file's names, apart in a unity batch (tests/CMakeLists.txt)

using namespace chaosbench;
using namespace std::chrono_literals;
using common::ArmedFault;
using common::FaultControl;

namespace {

struct Block {
  test::TempDir dir;
  std::string path = dir.file("rank0.ctl");
  common::UniqueFd memfd{FaultControl::create(path, 0)};
  std::unique_ptr<FaultControl> harness;
  Block() {
    REQUIRE(memfd);
    harness = FaultControl::open(path);
    REQUIRE(harness);
  }
  std::shared_ptr<bench::DeviceFaults> workload() const {
    return std::make_shared<bench::DeviceFaults>(FaultControl::open(path));
  }
};

// Records what a fault journals, as the run's journal would.
class RecordingLog final : public faults::UndoLog {
 public:
  std::uint64_t record(const std::string& kind, std::map<std::string, std::string> fields) override {
    entries.emplace_back(kind, std::move(fields));
    return entries.size();
  }
  void done(std::uint64_t id) override { done_ids.push_back(id); }
  std::vector<std::pair<std::string, std::map<std::string, std::string>>> entries;
  std::vector<std::uint64_t> done_ids;
};

}  // namespace

TEST_CASE("gpu faults: without a control block the fault layer is inert", "[gpu-faults]") {
  bench::DeviceFaults none(nullptr);
  CHECK_FALSE(none.active());
  CHECK_NOTHROW(none.device_call());
  CHECK_NOTHROW(none.allocation());
  CHECK_NOTHROW(none.collective());
  CHECK_FALSE(none.bitflip(CB_TENSOR_GRADIENTS));
}

TEST_CASE("gpu faults: a control file of the wrong size or magic is refused with the reason", "[gpu-faults]") {
  test::TempDir dir;
  dir.write("bad.ctl", "not a control block");
  std::string why;
  CHECK_FALSE(FaultControl::open(dir.file("bad.ctl"), &why));
  CHECK(why.find("too short") != std::string::npos);
  CHECK_FALSE(FaultControl::open(dir.file("missing.ctl"), &why));
  CHECK(why.find("No such file") != std::string::npos);
}

TEST_CASE("gpu faults: gpu.xid is sticky in the process that saw it, with its code and Xid", "[gpu-faults]") {
  Block b;
  auto faults = b.workload();
  CHECK_NOTHROW(faults->device_call());
  ArmedFault f;
  f.error_code = 214;
  f.xid = 48;
  b.harness->arm(CB_XID, f);
  try {
    faults->device_call();
    FAIL("no error");
  } catch (const bench::DeviceError& e) {
    CHECK(e.code() == 214);
    CHECK(e.xid() == 48);
    CHECK(e.sticky());
    CHECK(std::string(e.what()).find("uncorrectable ECC error") != std::string::npos);
  }
  b.harness->disarm(CB_XID);  // the GPU is reset: this process's context stays lost
  CHECK_THROWS_AS(faults->device_call(), bench::DeviceError);
  CHECK_THROWS_AS(faults->allocation(), bench::DeviceError);
  CHECK(b.harness->fired(CB_XID) == 1);
  CHECK_NOTHROW(b.workload()->device_call());  // a new process after the reset
}

TEST_CASE("gpu faults: gpu.oom fails the next `count` allocations with error 2", "[gpu-faults]") {
  Block b;
  auto faults = b.workload();
  ArmedFault f;
  f.error_code = 2;
  f.shots = 2;
  b.harness->arm(CB_OOM, f);
  for (int i = 0; i < 2; ++i) {
    try {
      faults->allocation();
      FAIL("no error");
    } catch (const bench::DeviceError& e) {
      CHECK(e.code() == 2);
      CHECK_FALSE(e.sticky());
    }
  }
  CHECK_NOTHROW(faults->allocation());
  CHECK_NOTHROW(faults->device_call());  // other calls never fail under gpu.oom
  CHECK(b.harness->fired(CB_OOM) == 2);
}

TEST_CASE("gpu faults: collective.error fails one collective with its ncclResult_t", "[gpu-faults]") {
  Block b;
  auto faults = b.workload();
  ArmedFault f;
  f.error_code = 6;
  f.shots = 1;
  b.harness->arm(CB_COLL_ERROR, f);
  try {
    faults->collective();
    FAIL("no error");
  } catch (const bench::DeviceError& e) {
    CHECK(e.source() == bench::DeviceError::Source::kCollective);
    CHECK(e.code() == 6);
    CHECK(std::string(e.what()).find("remote process exited") != std::string::npos);
  }
  CHECK_NOTHROW(faults->collective());
}

TEST_CASE("gpu faults: gpu.hang and collective.hang block until reverted", "[gpu-faults]") {
  Block b;
  auto faults = b.workload();
  for (auto kind : {CB_HANG, CB_COLL_HANG}) {
    b.harness->arm(kind, ArmedFault{});
    std::atomic<bool> returned{false};
    std::thread t([&] {
      if (kind == CB_HANG) faults->device_call();
      else faults->collective();
      returned = true;
    });
    std::this_thread::sleep_for(150ms);
    CHECK_FALSE(returned.load());
    b.harness->disarm(kind);
    t.join();
    CHECK(returned.load());
    CHECK(b.harness->fired(kind) == 1);
  }
}

TEST_CASE("gpu faults: gpu.slowdown stretches device work by the factor", "[gpu-faults]") {
  Block b;
  auto faults = b.workload();
  ArmedFault f;
  f.factor_milli = 3000;
  b.harness->arm(CB_SLOWDOWN, f);
  const auto t0 = std::chrono::steady_clock::now();
  for (int i = 0; i < 10; ++i) faults->device_work(1ms);
  // 1 ms of work at x3 sleeps 2 ms more: at least 20 ms in all (sleeps only ever run long).
  CHECK(std::chrono::steady_clock::now() - t0 >= 20ms);
  b.harness->disarm(CB_SLOWDOWN);
  const auto t1 = std::chrono::steady_clock::now();
  faults->device_work(100ms);
  CHECK(std::chrono::steady_clock::now() - t1 < 100ms);
}

TEST_CASE("gpu faults: gpu.bitflip gives shots only for its tensor, and flips exactly the bits asked",
          "[gpu-faults]") {
  Block b;
  auto faults = b.workload();
  ArmedFault f;
  f.tensor = CB_TENSOR_PARAMETERS;
  f.bits = 3;
  f.shots = 1;
  f.seed = 9;
  b.harness->arm(CB_BITFLIP, f);
  CHECK_FALSE(faults->bitflip(CB_TENSOR_GRADIENTS));
  auto shot = faults->bitflip(CB_TENSOR_PARAMETERS);
  REQUIRE(shot);
  CHECK_FALSE(faults->bitflip(CB_TENSOR_PARAMETERS));  // one shot
  std::vector<float> a(1000, 1.0f), c = a;
  const auto flips = bench::flip_bits(a.data(), a.size(), *shot);
  REQUIRE(flips.size() == 3);
  int differing_bits = 0;
  for (std::size_t i = 0; i < a.size(); ++i) {
    std::uint32_t x, y;
    std::memcpy(&x, &a[i], 4);
    std::memcpy(&y, &c[i], 4);
    differing_bits += __builtin_popcount(x ^ y);
  }
  CHECK(differing_bits == 3);
  CHECK(bench::flip_bits(c.data(), c.size(), *shot).front().index == flips.front().index);  // deterministic
}

TEST_CASE("gpu faults: replica fingerprints agree, name a strict majority, or cannot", "[gpu-faults]") {
  using namespace bench::train;
  const std::size_t base = 2;
  auto extras_of = [&](std::vector<std::uint64_t> fps) {
    std::vector<float> sum(base + kFingerprintFloats * fps.size(), 0.0f);
    for (std::size_t m = 0; m < fps.size(); ++m) {  // each rank writes its slot; the allreduce sums
      std::vector<float> mine(sum.size(), 0.0f);
      put_fingerprint(mine, base, static_cast<int>(m), fps[m]);
      for (std::size_t i = 0; i < sum.size(); ++i) sum[i] += mine[i];
    }
    return sum;
  };
  const std::uint64_t h = 0xfedcba9876543210ull, other = h ^ 1;
  auto v = compare_fingerprints(extras_of({h, h, h, h}), base, 4);
  CHECK(v.complete);
  CHECK(v.agree);
  v = compare_fingerprints(extras_of({h, h, other, h}), base, 4);
  CHECK_FALSE(v.agree);
  CHECK(v.strict_majority);
  CHECK(v.minority == std::vector<int>{2});
  v = compare_fingerprints(extras_of({h, other}), base, 2);
  CHECK_FALSE(v.agree);
  CHECK_FALSE(v.strict_majority);
  std::vector<float> none(base + kFingerprintFloats * 3, 0.0f);
  CHECK_FALSE(compare_fingerprints(none, base, 3).complete);
}

TEST_CASE("gpu faults: a gpu fault arms its slot in each target rank's block, journaled, and disarms on revert",
          "[gpu-faults]") {
  test::TempDir dir;
  for (int r = 0; r < 3; ++r) REQUIRE(FaultControl::create(faults::control_path(dir.path(), r), r) >= 0);
  faults::Params p;
  p.set("error", std::string("illegal_address"));
  p.set("code", std::int64_t{0});
  p.set("xid", std::int64_t{0});
  auto fault = faults::find_fault_type("gpu.xid")->make(p);
  faults::ResolvedTarget target;
  target.ranks = {1, 2};
  target.pids = {4242, 4243};
  target.control_dir = dir.path();
  RecordingLog log;
  fault->apply(target, log);
  REQUIRE(log.entries.size() == 2);
  CHECK(log.entries[0].first == "fault_control");
  CHECK(log.entries[0].second["slot"] == std::to_string(CB_XID));
  auto r1 = FaultControl::open(faults::control_path(dir.path(), 1));
  auto r0 = FaultControl::open(faults::control_path(dir.path(), 0));
  REQUIRE(r1->armed(CB_XID));
  CHECK(r1->armed(CB_XID)->error_code == 700);
  CHECK(r1->armed(CB_XID)->xid == 31);
  CHECK_FALSE(r0->armed(CB_XID));
  CHECK(fault->ended_processes() == std::vector<pid_t>{4242, 4243});
  fault->revert();
  CHECK_FALSE(r1->armed(CB_XID));
  CHECK(log.done_ids.size() == 2);
  CHECK_NOTHROW(fault->revert());  // idempotent
  CHECK(fault->effect().at("fired") == 0);

  faults::ResolvedTarget no_blocks;
  no_blocks.ranks = {0};
  auto again = faults::find_fault_type("gpu.xid")->make(p);
  CHECK_THROWS_WITH(again->apply(no_blocks, log), Catch::Contains("no fault control blocks"));
}

TEST_CASE("gpu faults: every gpu.* and collective.* type is in the catalogue with the error it surfaces",
          "[gpu-faults]") {
  for (const char* type : {"gpu.xid", "gpu.oom", "gpu.slowdown", "gpu.hang", "gpu.bitflip", "collective.error",
                           "collective.hang"}) {
    const auto* info = faults::find_fault_type(type);
    REQUIRE(info);
    CHECK_FALSE(info->surfaces.empty());
    CHECK_FALSE(info->workloads.empty());
  }
  auto r = test::run_command({test::binary(), "faults"}, 30s);
  REQUIRE(r.exit_code == 0);
  CHECK(r.out.find("214 cudaErrorECCUncorrectable (Xid 48)") != std::string::npos);
  CHECK(r.out.find("2 cudaErrorMemoryAllocation") != std::string::npos);
  CHECK(r.out.find("ncclResult_t") != std::string::npos);
}

TEST_CASE("gpu faults: scenarios name a workload that acts the fault out, and known errors and tensors",
          "[gpu-faults]") {
  test::TempDir dir;
  dir.write("serve.json", R"({"schema_version": 1, "name": "s", "cluster": {"nodes": 2},
    "workload": {"kind": "serve"},
    "faults": [{"type": "gpu.bitflip", "target": {"ranks": [0]}, "at": "1s"}]})");
  auto r = test::run_command({test::binary(), "validate", dir.file("serve.json")}, 30s);
  CHECK(r.exit_code == 2);
  CHECK(r.err.find("faults[0].type") != std::string::npos);
  CHECK(r.err.find("gpu.bitflip is acted out by train workloads; this workload is serve") != std::string::npos);
  dir.write("xid.json", R"({"schema_version": 1, "name": "x", "cluster": {"nodes": 2},
    "workload": {"kind": "train", "steps": 10},
    "faults": [{"type": "gpu.xid", "target": {"ranks": [0]}, "at": "1s", "error": "ecc2"}]})");
  r = test::run_command({test::binary(), "validate", dir.file("xid.json")}, 30s);
  CHECK(r.exit_code == 2);
  CHECK(r.err.find("unknown GPU error \"ecc2\"") != std::string::npos);
}

TEST_CASE("gpu faults: cleanup disarms a journaled control-block slot, a missing block is already gone",
          "[gpu-faults]") {
  Block b;
  ArmedFault f;
  f.error_code = 214;
  b.harness->arm(CB_XID, f);
  harness::JournalEntry e;
  e.id = 1;
  e.kind = "fault_control";
  e.fields = {{"path", b.path}, {"slot", std::to_string(CB_XID)}};
  CHECK(harness::undo_entry(e, true).find("would disarm") != std::string::npos);
  REQUIRE(b.harness->armed(CB_XID));
  CHECK(harness::undo_entry(e, false).find("disarmed slot") != std::string::npos);
  CHECK_FALSE(b.harness->armed(CB_XID));
  e.fields["path"] = b.dir.file("gone.ctl");
  CHECK(harness::undo_entry(e, false).find("gone") != std::string::npos);
  // A dead harness's link now names another process's descriptor: never opened.
  REQUIRE(::symlink("/proc/1/fd/0", b.dir.file("other.ctl").c_str()) == 0);
  e.fields["path"] = b.dir.file("other.ctl");
  CHECK_THAT(harness::undo_entry(e, false), Catch::Contains("gone with its harness"));
  e.fields["slot"] = "99";
  CHECK_THROWS(harness::undo_entry(e, false));
}

TEST_CASE("gpu faults: a call blocked by a hang returns while a Release lives, and blocks again after",
          "[gpu-faults]") {
  Block b;
  auto faults = b.workload();
  b.harness->arm(CB_COLL_HANG, ArmedFault{});
  std::atomic<bool> returned{false};
  std::thread t([&] {
    faults->collective();
    returned = true;
  });
  std::this_thread::sleep_for(100ms);
  CHECK_FALSE(returned.load());
  {
    const bench::DeviceFaults::Release release(faults.get());
    t.join();
  }
  CHECK(returned.load());
  std::atomic<bool> again{false};
  std::thread u([&] {
    faults->collective();
    again = true;
  });
  std::this_thread::sleep_for(100ms);
  CHECK_FALSE(again.load());
  b.harness->disarm(CB_COLL_HANG);
  u.join();
}

}  // namespace gpu_faults_test
