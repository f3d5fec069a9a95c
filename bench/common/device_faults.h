// The built-in workloads' side of GPU and collective faults (Path 1): the device layer
// and the communication layer ask this object, at the points where a GPU program would
// see each failure, whether the harness has armed one in the rank's fault control block
// (common/gpu/control_block.h, found through $CHAOSBENCH_FAULT_CONTROL), and act it out:
//   device_call()    a sticky device error (gpu.xid) throws DeviceError, and keeps
//                    throwing in this process once seen (the CUDA context is lost); a
//                    hang (gpu.hang) blocks while armed (a kernel that never completes);
//   allocation()     an allocation failure (gpu.oom) throws DeviceError(2);
//   device_work(d)   a slowdown (gpu.slowdown x k) stretches `d` of device work to k*d,
//                    by sleeping (a throttled GPU makes the host wait, not compute);
//   collective()     collective.error throws DeviceError(kCollective, code) per shot;
//                    collective.hang blocks while armed;
//   bitflip(tensor)  gpu.bitflip: a shot for that tensor, to flip with flip_bits().
// Without a control block every call is one branch on a null pointer.
// What is real and what is emulated on a CPU: docs/gpu-faults.md.
// Threads: safe from any thread (the control block is atomic; the latch is atomic).
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "common/gpu/fault_control.h"

namespace chaosbench::bench {

struct BitflipShot {
  std::uint64_t seed = 0;  // the arming's seed mixed with the shot number
  int bits = 1;
};

// One flipped bit: the element and the bit (0 = least significant of the float).
struct FlippedBit {
  std::size_t index = 0;
  int bit = 0;
};

class DeviceFaults {
 public:
  // From $CHAOSBENCH_FAULT_CONTROL; inert when unset. A set but unusable path is an
  // error (the harness made it), reported through *why and then inert.
  static std::shared_ptr<DeviceFaults> from_env(std::string* why = nullptr);
  explicit DeviceFaults(std::unique_ptr<common::FaultControl> control);

  bool active() const { return control_ != nullptr; }

  void device_call();
  void allocation();
  void device_work(std::chrono::nanoseconds took);
  // Whether a slowdown is in effect: device_work() needs the call's time only then.
  bool slowed() const { return control_ && control_->armed(CB_SLOWDOWN).has_value(); }
  void collective();
  std::optional<BitflipShot> bitflip(cb_bitflip_tensor tensor);

  // The sticky error seen so far, if any (its message), for a workload's own reporting.
  std::optional<std::string> sticky_error() const;

  // Lets calls blocked by a hang return while `release` lives, so an owner can join a
  // thread stuck in one (the gradient allreducer's destructor). Not for concurrent use
  // by several owners.
  class Release {
   public:
    explicit Release(DeviceFaults* f) : f_(f) {
      if (f_) f_->released_ = true;
    }
    ~Release() {
      if (f_) f_->released_ = false;
    }
    Release(const Release&) = delete;
    Release& operator=(const Release&) = delete;

   private:
    DeviceFaults* f_;
  };

 private:
  [[noreturn]] void throw_sticky() const;
  void wait_while_armed(cb_fault_kind kind);

  std::unique_ptr<common::FaultControl> control_;
  std::atomic<bool> latched_{false};
  std::atomic<int> sticky_code_{0};
  std::atomic<int> sticky_xid_{0};
  std::atomic<std::int64_t> slow_debt_ns_{0};
  std::atomic<std::uint64_t> bitflip_shots_{0};
  std::atomic<bool> released_{false};
};

// Flips shot.bits distinct random bits of host[0..n) (deterministic in shot.seed);
// returns where.
std::vector<FlippedBit> flip_bits(float* host, std::size_t n, const BitflipShot& shot);

}  // namespace chaosbench::bench
