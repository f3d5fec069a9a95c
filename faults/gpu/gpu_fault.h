// GPU and collective faults (gpu.xid, gpu.oom, gpu.slowdown, gpu.hang, gpu.bitflip,
// collective.error, collective.hang): each arms one slot of the target ranks' fault
// control blocks (control_block.h) and disarms it on revert. What happens then is the
// workload's: the built-in trainer and server act the fault out in their device and
// communication layers (bench/common/device_faults.h), any CUDA program through the
// preloaded interposer (faults/gpu/interposer). docs/gpu-faults.md says which is real
// and which emulated where.
// Journal: a "fault_control" entry {path, slot} per rank before arming, so `chaosbench
// cleanup` can disarm. Revert is idempotent. Sticky errors latch inside the process that
// saw them: a revert is the GPU's reset, for the processes started after it.
#pragma once

#include <map>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "faults/backend_choice.h"
#include "faults/fault.h"
#include "common/gpu/fault_control.h"

namespace chaosbench::faults {

class GpuFault final : public Fault {
 public:
  // `may_end`: the workload ends the rank when it sees this fault (a lost context, an
  // allocation failure, the hang watchdog): its exit is the fault's effect.
  GpuFault(cb_fault_kind kind, common::ArmedFault settings, bool may_end)
      : kind_(kind), settings_(settings), may_end_(may_end) {}
  ~GpuFault() override;
  std::string backend() const override { return "control-block"; }
  std::vector<pid_t> ended_processes() const override { return may_end_ ? pids_ : std::vector<pid_t>{}; }
  // "fired": injections the workloads reported (0: the fault never met a device call),
  // "first_fired_ms": from arming to the first of them; "superseded": ranks where a later
  // fault of the same kind took the slot over (one slot per kind and rank), whose
  // figures are that fault's.
  std::map<std::string, double> effect() const override { return effect_; }

 private:
  void do_apply(const ResolvedTarget& target) override;
  void do_revert() override;
  void read_effect();

  cb_fault_kind kind_;
  common::ArmedFault settings_;
  bool may_end_;
  std::vector<pid_t> pids_;
  struct Armed {
    std::unique_ptr<common::FaultControl> control;
    std::uint64_t journal_id = 0;
    std::uint64_t armed_ns = 0;
    std::uint64_t sequence = 0;  // this fault's arming of the slot
    std::string path;
  };
  std::vector<Armed> armed_;  // every target rank's block; armed once its sequence is non-zero
  std::map<std::string, double> effect_;
};

// What restart_after does after gpu.xid, gpu.oom, gpu.hang, collective.hang (the
// registry's restart_after of each; the envelope key, not a parameter of these lists).
inline constexpr std::string_view kGpuRestartAfter =
    "the GPU is reset and the rank started again this long after the fault (as node.kill's); the fault is reverted "
    "then";

// Every GPU and collective type, listed as one family "gpu.*, collective.*": the built-in
// workloads act them out on any host (their control block); a command workload needs the
// interposer, which only matters where a GPU and its driver are.
const BackendChoice& gpu_backends();

std::span<const ParamSpec> gpu_xid_params();
std::span<const ParamSpec> gpu_oom_params();
std::span<const ParamSpec> gpu_slowdown_params();
std::span<const ParamSpec> gpu_hang_params();
std::span<const ParamSpec> gpu_bitflip_params();
std::span<const ParamSpec> collective_error_params();
std::span<const ParamSpec> collective_hang_params();
std::unique_ptr<Fault> make_gpu_xid(const Params& p);
std::unique_ptr<Fault> make_gpu_oom(const Params& p);
std::unique_ptr<Fault> make_gpu_slowdown(const Params& p);
std::unique_ptr<Fault> make_gpu_hang(const Params& p);
std::unique_ptr<Fault> make_gpu_bitflip(const Params& p);
std::unique_ptr<Fault> make_collective_error(const Params& p);
std::unique_ptr<Fault> make_collective_hang(const Params& p);
std::string check_gpu_xid(const Params& p);
std::string check_gpu_bitflip(const Params& p);

// gpu.xid's named errors: "ecc" -> {214, 48}, ...; nullptr when unknown.
struct XidError {
  std::string_view name;
  int code;  // cudaError_t / CUresult
  int xid;   // what the driver logs
  std::string_view meaning;
};
const XidError* find_xid_error(std::string_view name);

}  // namespace chaosbench::faults
