// Tests of libchaosbench_cuda.so, the CUDA/NCCL fault interposer (faults/gpu/interposer/):
// the probe programs of tests/programs/ run with and without LD_PRELOAD while the test arms
// their control block. No GPU is needed: without one, the real runtime's answers (35, no
// driver) are what must pass through, and a stand-in libcuda.so.1 (fake_cuda_driver.cc)
// supplies the successful calls that slowdowns and bit flips act on. Skipped, with the
// reason, when the interposer is not built (no CUDA headers).
#include <catch2/catch.hpp>

#include <chrono>
#include <memory>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "common/gpu/fault_control.h"
#include "test_util.h"

namespace cuda_interposer_test {  // this file's names, apart in a unity batch (tests/CMakeLists.txt)

#ifndef CHAOSBENCH_CUDA_INTERPOSER
#define CHAOSBENCH_CUDA_INTERPOSER ""
#define CHAOSBENCH_CUDA_PROBE ""
#define CHAOSBENCH_CUDA_DRIVER_PROBE ""
#define CHAOSBENCH_FAKE_CUDA_DIR ""
#define CHAOSBENCH_CUDA_STUB_DIR ""
#define CHAOSBENCH_RTLD_NEXT_WRAPPER ""
#endif

namespace {

using chaosbench::common::ArmedFault;
using chaosbench::common::FaultControl;
using chaosbench::test::CommandResult;
using chaosbench::test::TempDir;
using namespace std::chrono_literals;

bool skip_without_interposer() {
  if (std::string(CHAOSBENCH_CUDA_INTERPOSER).empty()) {
    WARN("skipped: libchaosbench_cuda.so is not built (no CUDA headers, or CHAOSBENCH_CUDA=OFF)");
    return true;
  }
  return false;
}

// A rank's control block in a temporary directory, zero-filled (nothing armed).
class Control {
 public:
  Control() : path_(dir_.file("rank0.ctl")) {
    REQUIRE(FaultControl::create(path_, 0) >= 0);  // the memfd stays open for the test
    control_ = FaultControl::open(path_);
    REQUIRE(control_);
  }
  FaultControl* operator->() { return control_.get(); }
  const std::string& path() const { return path_; }

 private:
  TempDir dir_;
  std::string path_;
  std::unique_ptr<FaultControl> control_;
};

ArmedFault fault(std::int64_t error_code = 0, std::int64_t shots = -1) {
  ArmedFault f;
  f.error_code = error_code;
  f.shots = shots;
  return f;
}

// How a probe runs: with the interposer and which control block, and which libcuda.so.1.
struct Setup {
  bool preload = true;
  std::string control;       // $CHAOSBENCH_FAULT_CONTROL; empty: unset
  std::string library_path;  // $LD_LIBRARY_PATH; empty: unset
  std::string also_preload;  // another library, preloaded after the interposer
};

Setup without_interposer() {
  Setup s;
  s.preload = false;
  return s;
}
Setup with_control(const Control& control) {
  Setup s;
  s.control = control.path();
  return s;
}

CommandResult run_probe(const std::string& program, const std::vector<std::string>& calls, const Setup& setup) {
  std::vector<std::string> argv = {"/usr/bin/env", "-u", "LD_PRELOAD", "-u", "CHAOSBENCH_FAULT_CONTROL",
                                   "-u", "LD_LIBRARY_PATH"};
  if (setup.preload) {
    std::string preload = std::string("LD_PRELOAD=") + CHAOSBENCH_CUDA_INTERPOSER;
    if (!setup.also_preload.empty()) preload += ":" + setup.also_preload;
    argv.push_back(preload);
  }
  if (!setup.control.empty()) argv.push_back("CHAOSBENCH_FAULT_CONTROL=" + setup.control);
  if (!setup.library_path.empty()) argv.push_back("LD_LIBRARY_PATH=" + setup.library_path);
  argv.push_back(program);
  argv.insert(argv.end(), calls.begin(), calls.end());
  CommandResult r = chaosbench::test::run_command(argv, 20s);
  INFO("probe stdout:\n" << r.out << "probe stderr:\n" << r.err);
  REQUIRE_FALSE(r.timed_out);
  REQUIRE(r.exit_code == 0);
  return r;
}

CommandResult runtime_probe(const std::vector<std::string>& calls, const Setup& setup) {
  return run_probe(CHAOSBENCH_CUDA_PROBE, calls, setup);
}
CommandResult driver_probe(const std::vector<std::string>& calls, Setup setup, const std::string& driver_dir) {
  setup.library_path = driver_dir;
  return run_probe(CHAOSBENCH_CUDA_DRIVER_PROBE, calls, setup);
}

// Each line of a probe's output is "<code> [detail]".
std::vector<long> codes(const CommandResult& r) {
  std::vector<long> out;
  std::istringstream lines(r.out);
  for (std::string line; std::getline(lines, line);) out.push_back(std::stol(line));
  return out;
}
double detail(const CommandResult& r, std::size_t line_index) {
  std::istringstream lines(r.out);
  std::string line;
  for (std::size_t i = 0; i <= line_index; ++i) REQUIRE(std::getline(lines, line));
  std::istringstream words(line);
  long code = 0;
  double value = -1;
  words >> code >> value;
  return value;
}

std::size_t occurrences(const std::string& text, const std::string& what) {
  std::size_t n = 0;
  for (auto at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

// Disarms `kind` after `delay` from another thread, as the harness reverts a fault.
class DelayedDisarm {
 public:
  DelayedDisarm(FaultControl* control, cb_fault_kind kind, std::chrono::milliseconds delay)
      : thread_([=] {
          std::this_thread::sleep_for(delay);
          control->disarm(kind);
        }) {}
  ~DelayedDisarm() { thread_.join(); }

 private:
  std::thread thread_;
};

const std::vector<std::string> kRuntimeCalls = {"malloc", "mallochost", "sync",  "streamsync", "streamquery", "launch",
                                                "count",  "lasterror",  "dtoh", "nccl",       "ncclasync"};
const std::vector<std::string> kDriverCalls = {"cuinit",        "cumemalloc",    "cusync",   "dtoh",
                                               "dl-cumemalloc", "gp-cumemalloc", "gp-cusync"};

}  // namespace

TEST_CASE("interposer: disarmed or without a control block, every hooked call returns the real result",
          "[cuda-interposer]") {
  if (skip_without_interposer()) return;
  Control control;
  const auto real = runtime_probe(kRuntimeCalls, without_interposer());
  REQUIRE(codes(real).size() == kRuntimeCalls.size());
  const auto disarmed = runtime_probe(kRuntimeCalls, with_control(control));
  const auto no_control = runtime_probe(kRuntimeCalls, Setup{});
  CHECK(codes(disarmed) == codes(real));
  CHECK(codes(no_control) == codes(real));
  CHECK(disarmed.err.find("chaosbench") == std::string::npos);

  for (const std::string& driver : {std::string(CHAOSBENCH_CUDA_STUB_DIR), std::string(CHAOSBENCH_FAKE_CUDA_DIR)}) {
    INFO("libcuda.so.1 from " << driver);
    const auto real_driver = driver_probe(kDriverCalls, without_interposer(), driver);
    REQUIRE(codes(real_driver).size() == kDriverCalls.size());
    CHECK(codes(driver_probe(kDriverCalls, with_control(control), driver)) == codes(real_driver));
  }
  for (int kind = 0; kind < CB_FAULT_KINDS; ++kind) CHECK(control->fired(static_cast<cb_fault_kind>(kind)) == 0);
}

TEST_CASE("interposer: CB_XID latches a sticky error that every later CUDA call returns", "[cuda-interposer]") {
  if (skip_without_interposer()) return;
  Control control;
  ArmedFault xid = fault(214);
  xid.xid = 48;
  control->arm(CB_XID, xid);

  SECTION("runtime calls, then NCCL fails as on a lost device") {
    const auto r = runtime_probe({"malloc", "count", "sync", "nccl"}, with_control(control));
    CHECK(codes(r) == std::vector<long>{214, 214, 214, 1});  // 1: ncclUnhandledCudaError
    CHECK(occurrences(r.err, "chaosbench: injected CUDA error 214 (cudaErrorECCUncorrectable), Xid 48") == 1);
    CHECK(control->fired(CB_XID) == 1);

    // Disarmed (the GPU was reset), a new process runs normally.
    control->disarm(CB_XID);
    const auto real = runtime_probe({"malloc", "count"}, without_interposer());
    CHECK(codes(runtime_probe({"malloc", "count"}, with_control(control))) == codes(real));
  }
  SECTION("driver calls, direct and through cuGetProcAddress") {
    const auto r = driver_probe({"cuinit", "cumemalloc", "gp-cusync"}, with_control(control),
                                CHAOSBENCH_FAKE_CUDA_DIR);
    CHECK(codes(r) == std::vector<long>{214, 214, 214});
    CHECK(control->fired(CB_XID) == 1);
  }
}

TEST_CASE("interposer: CB_OOM fails allocations, and only allocations", "[cuda-interposer]") {
  if (skip_without_interposer()) return;
  Control control;
  const auto real = runtime_probe({"malloc", "count"}, without_interposer());

  SECTION("every allocation while armed") {
    control->arm(CB_OOM, fault(2));
    const auto r = runtime_probe({"malloc", "count", "mallochost"}, with_control(control));
    CHECK(codes(r) == std::vector<long>{2, codes(real)[1], 2});
    CHECK(control->fired(CB_OOM) == 2);
  }
  SECTION("one shot fails one allocation") {
    control->arm(CB_OOM, fault(2, 1));
    const auto r = runtime_probe({"malloc", "malloc"}, with_control(control));
    CHECK(codes(r) == std::vector<long>{2, codes(real)[0]});
    CHECK(control->fired(CB_OOM) == 1);
  }
  SECTION("driver allocations however the program found cuMemAlloc") {
    const std::vector<std::string> calls = {"cumemalloc", "dl-cumemalloc", "gp-cumemalloc"};
    CHECK(codes(driver_probe(calls, with_control(control), CHAOSBENCH_FAKE_CUDA_DIR)) ==
          std::vector<long>{0, 0, 0});
    control->arm(CB_OOM, fault(2));
    CHECK(codes(driver_probe(calls, with_control(control), CHAOSBENCH_FAKE_CUDA_DIR)) ==
          std::vector<long>{2, 2, 2});
    CHECK(control->fired(CB_OOM) == 3);
  }
}

TEST_CASE("interposer: CB_COLL_ERROR fails a collective and becomes its communicator's async error",
          "[cuda-interposer]") {
  if (skip_without_interposer()) return;
  Control control;
  const auto real = runtime_probe({"nccl"}, without_interposer());
  control->arm(CB_COLL_ERROR, fault(6, 1));  // ncclRemoteError, once
  const auto r = runtime_probe({"nccl", "ncclasync", "nccl"}, with_control(control));
  CHECK(codes(r) == std::vector<long>{6, 0, codes(real)[0]});
  CHECK(detail(r, 1) == 6);
  CHECK(control->fired(CB_COLL_ERROR) == 1);
}

TEST_CASE("interposer: CB_COLL_HANG blocks collectives until disarmed", "[cuda-interposer]") {
  if (skip_without_interposer()) return;
  Control control;
  const auto real = runtime_probe({"nccl"}, without_interposer());
  control->arm(CB_COLL_HANG, fault());
  const auto start = std::chrono::steady_clock::now();
  {
    DelayedDisarm disarm(control.operator->(), CB_COLL_HANG, 300ms);
    CHECK(codes(runtime_probe({"nccl"}, with_control(control))) == codes(real));
  }
  CHECK(std::chrono::steady_clock::now() - start >= 280ms);
  CHECK(control->fired(CB_COLL_HANG) == 1);
}

TEST_CASE("interposer: CB_HANG blocks synchronisations and launches until disarmed, queries say not ready",
          "[cuda-interposer]") {
  if (skip_without_interposer()) return;
  Control control;
  const auto real = runtime_probe({"sync", "launch"}, without_interposer());
  control->arm(CB_HANG, fault());

  SECTION("a synchronisation blocks") {
    DelayedDisarm disarm(control.operator->(), CB_HANG, 300ms);
    const auto r = runtime_probe({"sync"}, with_control(control));
    CHECK(codes(r)[0] == codes(real)[0]);
    CHECK(detail(r, 0) >= 250);  // milliseconds the call took
  }
  SECTION("a launch blocks") {
    const auto start = std::chrono::steady_clock::now();
    {
      DelayedDisarm disarm(control.operator->(), CB_HANG, 300ms);
      CHECK(codes(runtime_probe({"launch"}, with_control(control)))[0] == codes(real)[1]);
    }
    CHECK(std::chrono::steady_clock::now() - start >= 280ms);
  }
  SECTION("a query answers cudaErrorNotReady at once") {
    CHECK(codes(runtime_probe({"streamquery", "streamquery"}, with_control(control))) ==
          std::vector<long>{600, 600});
    control->disarm(CB_HANG);
  }
  CHECK(control->fired(CB_HANG) >= 1);
}

TEST_CASE("interposer: CB_SLOWDOWN stretches synchronisations by its factor", "[cuda-interposer]") {
  if (skip_without_interposer()) return;
  Control control;
  ArmedFault slow = fault();
  slow.factor_milli = 4000;
  control->arm(CB_SLOWDOWN, slow);

  // Without a driver the runtime's synchronisation fails at once: still the real result.
  const auto real = runtime_probe({"sync"}, without_interposer());
  CHECK(codes(runtime_probe({"sync"}, with_control(control))) == codes(real));

  // The stand-in driver's synchronisation takes 100 ms: four times as long is >= 400 ms
  // (a loaded machine only adds to it; no upper bound is asserted).
  const auto r = driver_probe({"cusync", "gp-cusync"}, with_control(control), CHAOSBENCH_FAKE_CUDA_DIR);
  CHECK(codes(r) == std::vector<long>{0, 0});
  CHECK(detail(r, 0) >= 380);
  CHECK(detail(r, 1) >= 380);
  CHECK(control->fired(CB_SLOWDOWN) >= 2);
}

TEST_CASE("interposer: CB_BITFLIP flips bits of a successful device-to-host copy", "[cuda-interposer]") {
  if (skip_without_interposer()) return;
  Control control;
  ArmedFault flip = fault(0, 1);
  flip.bits = 3;
  flip.seed = 42;
  control->arm(CB_BITFLIP, flip);

  // A failed copy (no driver) is not corrupted and takes no shot.
  const auto failed = runtime_probe({"dtoh"}, with_control(control));
  CHECK(codes(failed)[0] != 0);
  CHECK(detail(failed, 0) == 0);
  CHECK(control->fired(CB_BITFLIP) == 0);

  const auto r = driver_probe({"dtoh", "dtoh"}, with_control(control), CHAOSBENCH_FAKE_CUDA_DIR);
  CHECK(codes(r) == std::vector<long>{0, 0});
  CHECK(detail(r, 0) == 3);  // the one shot: three distinct bits of the zeroed buffer
  CHECK(detail(r, 1) == 0);
  CHECK(control->fired(CB_BITFLIP) == 1);
}

TEST_CASE("interposer: another preloaded library's dlsym(RTLD_NEXT) still finds the definition after it",
          "[cuda-interposer]") {
  if (skip_without_interposer()) return;
  Control control;
  const auto real = runtime_probe({"count"}, without_interposer());
  // The program's call reaches the interposer, then the wrapper (next after it), whose
  // dlsym(RTLD_NEXT) goes through the interposer's dlsym and must still find the runtime.
  Setup setup = with_control(control);
  setup.also_preload = CHAOSBENCH_RTLD_NEXT_WRAPPER;
  const auto r = runtime_probe({"count"}, setup);
  CHECK(codes(r) == codes(real));
  CHECK(r.err.find("rtld_next_wrapper: called the next cudaGetDeviceCount") != std::string::npos);
}

TEST_CASE("interposer: chaosbench run preloads it into a command workload with GPU faults and arms the rank's block",
          "[cuda-interposer]") {
  if (skip_without_interposer()) return;
  TempDir dir;
  // The fault is in effect from 200 ms; the probe allocates at 1 s, through the
  // preloaded interposer and the block named in its environment: out of memory (2).
  dir.write("s.json", std::string(R"({"schema_version": 1, "name": "cmd-gpu", "cluster": {"nodes": 1, "mode": "local"},
    "workload": {"kind": "command", "argv": ["sh", "-c", "sleep 1; exec \"$0\" malloc", ")") +
                          CHAOSBENCH_CUDA_PROBE + R"("]},
    "faults": [{"name": "oom", "type": "gpu.oom", "target": {"ranks": [0]}, "at": "200ms", "duration": "1h"}]})");
  auto r = chaosbench::test::run_command(
      {chaosbench::test::binary(), "run", dir.file("s.json"), "--out", dir.file("out"), "--quiet"}, 60s);
  INFO(r.err);
  CHECK(chaosbench::test::read_file(dir.file("out/logs/rank0.out")) == "2\n");
  CHECK(chaosbench::test::read_file(dir.file("out/logs/rank0.err")).find("chaosbench") == std::string::npos);
}

}  // namespace cuda_interposer_test
