#include "faults/gpu/gpu_fault.h"

#include <array>
#include <fmt/format.h>

namespace chaosbench::faults {
namespace {

// Codes: CUDA's cudaError_t / CUresult (the same numbers for these), Xids: NVIDIA's Xid
// catalogue (48 double-bit ECC, 31 MMU fault, 13 graphics engine exception, 79 fallen
// off the bus, 74 NVLink error); docs/gpu-faults.md lists them per error.
constexpr std::array kXidErrors{
    XidError{"ecc", 214, 48, "uncorrectable ECC error (HBM)"},
    XidError{"illegal_address", 700, 31, "illegal memory access (an MMU fault)"},
    XidError{"launch_failure", 719, 13, "unspecified launch failure (a kernel crashed)"},
    XidError{"fallen_off_bus", 46, 79, "the GPU fell off the bus: devices unavailable"},
    XidError{"nvlink", 220, 74, "uncorrectable NVLink error"},
};

constexpr std::array kXidParams{
    ParamSpec{"error", ParamKind::kString, false, "ecc",
              "ecc (214, Xid 48), illegal_address (700, Xid 31), launch_failure (719, Xid 13), fallen_off_bus "
              "(46, Xid 79) or nvlink (220, Xid 74)"},
    ParamSpec{"code", ParamKind::kInteger, false, "0", "the CUDA error code instead of the error's own (0: the error's)",
              0, 100000},
    ParamSpec{"xid", ParamKind::kInteger, false, "0", "the Xid recorded instead of the error's own (0: the error's)", 0,
              1000}};
constexpr std::array kOomParams{
    ParamSpec{"code", ParamKind::kInteger, false, "2", "the CUDA error code allocations return", 1, 100000},
    ParamSpec{"count", ParamKind::kInteger, false, "0", "allocations that fail (0: every one while in effect)", 0, 1e9}};
constexpr std::array kSlowdownParams{
    ParamSpec{"factor", ParamKind::kNumber, false, "2", "device work takes this many times as long", 1, 1000}};
constexpr std::array kBitflipParams{
    ParamSpec{"tensor", ParamKind::kString, false, "gradients",
              "gradients (after the allreduce), parameters, or local_gradients (before it)"},
    ParamSpec{"bits", ParamKind::kInteger, false, "1", "bits flipped each time", 1, 64},
    ParamSpec{"count", ParamKind::kInteger, false, "1", "times it flips (one per step at most)", 1, 1e9},
    ParamSpec{"seed", ParamKind::kInteger, false, "1", "chooses the elements and bits", 0, 1e18}};
constexpr std::array kCollectiveErrorParams{
    ParamSpec{"code", ParamKind::kInteger, false, "2",
              "the ncclResult_t returned (2 system error, 3 internal error, 6 remote error)", 1, 100},
    ParamSpec{"count", ParamKind::kInteger, false, "1", "collectives that fail (0: every one while in effect)", 0, 1e9}};

constexpr std::string_view kInterposerNeeds[] = {"cuda_interposer", "nvidia_device", "libcuda"};
constexpr BackendOption kGpuOptions[] = {{"control block (train, serve)", {}},
                                         {"cuda interposer (command)", kInterposerNeeds, true}};
constexpr BackendChoice kGpuBackends{"gpu.*, collective.*", kGpuOptions};

std::int64_t shots(const Params& p) {
  const auto n = p.get<std::int64_t>("count");
  return n == 0 ? -1 : n;
}

}  // namespace


const XidError* find_xid_error(std::string_view name) {
  for (const auto& e : kXidErrors)
    if (e.name == name) return &e;
  return nullptr;
}

GpuFault::~GpuFault() = default;

void GpuFault::do_apply(const ResolvedTarget& target) {
  if (target.control_dir.empty())
    throw FaultError("this run has no fault control blocks (GPU faults need a workload started by chaosbench run)");
  if (target.ranks.empty()) throw FaultError("the target has no ranks");
  pids_ = target.pids;
  effect_.clear();
  // Every block is opened and journaled before any is armed: a rank that cannot be
  // reached fails the fault with nothing in effect, and the ranks are armed within
  // microseconds of each other rather than a journal sync apart. A failure before arming
  // is rolled back by Fault::apply: do_revert closes the journal entries made so far.
  armed_.clear();
  for (int rank : target.ranks) {
    const std::string path = control_path(target.control_dir, rank);
    std::string why;
    auto control = common::FaultControl::open(path, &why);
    if (!control) throw FaultError(fmt::format("rank {}: {}", rank, why));
    Armed a;
    a.control = std::move(control);
    a.path = path;
    armed_.push_back(std::move(a));
  }
  for (auto& a : armed_) a.journal_id = log().record("fault_control", {{"path", a.path}, {"slot", std::to_string(kind_)}});
  for (auto& a : armed_) {  // cannot fail: every rank is armed, or (above) none
    a.armed_ns = common::realtime_ns();
    a.sequence = a.control->arm(kind_, settings_);
  }
}

void GpuFault::read_effect() {
  double fired = 0, first_ms = -1, superseded = 0;
  for (const auto& a : armed_) {
    if (a.control->sequence(kind_) != a.sequence) {
      ++superseded;
      continue;
    }
    fired += static_cast<double>(a.control->fired(kind_));
    const auto first = a.control->first_fired_ns(kind_);
    if (first > 0) {
      const double ms = (static_cast<double>(first) - static_cast<double>(a.armed_ns)) / 1e6;
      first_ms = first_ms < 0 ? ms : std::min(first_ms, ms);
    }
  }
  effect_["fired"] = fired;
  if (superseded > 0) effect_["superseded"] = superseded;
  if (first_ms >= 0) effect_["first_fired_ms"] = first_ms;
}

void GpuFault::do_revert() {
  // After a failed apply nothing is armed (sequence 0) and some entries are journaled.
  const bool armed = !armed_.empty() && armed_.front().sequence != 0;
  if (armed) read_effect();
  for (auto& a : armed_) {
    if (armed) a.control->disarm_if(kind_, a.sequence);
    if (a.journal_id) log().done(a.journal_id);
  }
  armed_.clear();
}

const BackendChoice& gpu_backends() { return kGpuBackends; }
std::span<const ParamSpec> gpu_xid_params() { return kXidParams; }
std::span<const ParamSpec> gpu_oom_params() { return kOomParams; }
std::span<const ParamSpec> gpu_slowdown_params() { return kSlowdownParams; }
std::span<const ParamSpec> gpu_hang_params() { return {}; }
std::span<const ParamSpec> gpu_bitflip_params() { return kBitflipParams; }
std::span<const ParamSpec> collective_error_params() { return kCollectiveErrorParams; }
std::span<const ParamSpec> collective_hang_params() { return {}; }

std::string check_gpu_xid(const Params& p) {
  if (find_xid_error(p.get<std::string>("error"))) return "";
  std::string names;
  for (const auto& e : kXidErrors) names += fmt::format("{}\"{}\"", names.empty() ? "" : ", ", e.name);
  return fmt::format("error: unknown GPU error \"{}\" (one of {})", p.get<std::string>("error"), names);
}

std::string check_gpu_bitflip(const Params& p) {
  const auto& t = p.get<std::string>("tensor");
  if (t == "gradients" || t == "parameters" || t == "local_gradients") return "";
  return fmt::format("tensor: unknown tensor \"{}\" (\"gradients\", \"parameters\" or \"local_gradients\")", t);
}

std::unique_ptr<Fault> make_gpu_xid(const Params& p) {
  const XidError* e = find_xid_error(p.get<std::string>("error"));
  common::ArmedFault f;
  f.error_code = p.get<std::int64_t>("code") ? p.get<std::int64_t>("code") : (e ? e->code : 214);
  f.xid = p.get<std::int64_t>("xid") ? p.get<std::int64_t>("xid") : (e ? e->xid : 48);
  return std::make_unique<GpuFault>(CB_XID, f, true);
}

std::unique_ptr<Fault> make_gpu_oom(const Params& p) {
  common::ArmedFault f;
  f.error_code = p.get<std::int64_t>("code");
  f.shots = shots(p);
  return std::make_unique<GpuFault>(CB_OOM, f, true);
}

std::unique_ptr<Fault> make_gpu_slowdown(const Params& p) {
  common::ArmedFault f;
  f.factor_milli = static_cast<std::int64_t>(p.get<double>("factor") * 1000.0 + 0.5);
  return std::make_unique<GpuFault>(CB_SLOWDOWN, f, false);
}

std::unique_ptr<Fault> make_gpu_hang(const Params&) { return std::make_unique<GpuFault>(CB_HANG, common::ArmedFault{}, true); }

std::unique_ptr<Fault> make_gpu_bitflip(const Params& p) {
  common::ArmedFault f;
  const auto& t = p.get<std::string>("tensor");
  f.tensor = t == "parameters" ? CB_TENSOR_PARAMETERS : t == "local_gradients" ? CB_TENSOR_LOCAL_GRADIENTS : CB_TENSOR_GRADIENTS;
  f.bits = p.get<std::int64_t>("bits");
  f.shots = p.get<std::int64_t>("count");
  f.seed = static_cast<std::uint64_t>(p.get<std::int64_t>("seed"));
  return std::make_unique<GpuFault>(CB_BITFLIP, f, false);
}

std::unique_ptr<Fault> make_collective_error(const Params& p) {
  common::ArmedFault f;
  f.error_code = p.get<std::int64_t>("code");
  f.shots = shots(p);
  return std::make_unique<GpuFault>(CB_COLL_ERROR, f, false);
}

std::unique_ptr<Fault> make_collective_hang(const Params&) {
  return std::make_unique<GpuFault>(CB_COLL_HANG, common::ArmedFault{}, true);
}

}  // namespace chaosbench::faults
