#include "bench/common/device_faults.h"

#include <algorithm>
#include <cstring>
#include <thread>
#include <unordered_set>

#include <fmt/format.h>

#include "bench/common/device_error.h"

namespace chaosbench::bench {
namespace {

using common::ArmedFault;
using common::FaultControl;

// Sleeps shorter than this are saved up: a nanosleep costs tens of microseconds, which
// would add to short element-wise kernels more than they take.
constexpr std::int64_t kMinSleepNs = 200'000;
// How often a hang looks whether it has been lifted.
constexpr auto kHangPoll = std::chrono::milliseconds(5);

std::uint64_t splitmix64(std::uint64_t& x) {
  std::uint64_t z = (x += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

}  // namespace

std::shared_ptr<DeviceFaults> DeviceFaults::from_env(std::string* why) {
  return std::make_shared<DeviceFaults>(FaultControl::from_env(why));
}

DeviceFaults::DeviceFaults(std::unique_ptr<FaultControl> control) : control_(std::move(control)) {}

void DeviceFaults::throw_sticky() const {
  const int code = sticky_code_.load(), xid = sticky_xid_.load();
  throw DeviceError(DeviceError::Source::kDevice, code,
                    fmt::format("CUDA error {} ({}), Xid {}: the device is unusable until it is reset", code,
                                cuda_error_name(code), xid),
                    xid, true);
}

void DeviceFaults::wait_while_armed(cb_fault_kind kind) {
  while (!released_ && control_->armed(kind)) std::this_thread::sleep_for(kHangPoll);
}

void DeviceFaults::device_call() {
  if (!control_) return;
  if (latched_.load(std::memory_order_acquire)) throw_sticky();
  if (auto xid = control_->armed(CB_XID)) {
    sticky_code_ = static_cast<int>(xid->error_code);
    sticky_xid_ = static_cast<int>(xid->xid);
    if (!latched_.exchange(true)) control_->record_fired(CB_XID);
    throw_sticky();
  }
  if (control_->armed(CB_HANG)) {
    control_->record_fired(CB_HANG);
    wait_while_armed(CB_HANG);
  }
}

void DeviceFaults::allocation() {
  if (!control_) return;
  device_call();
  if (auto oom = control_->armed(CB_OOM); oom && control_->take_shot(CB_OOM)) {
    const int code = static_cast<int>(oom->error_code);
    throw DeviceError(DeviceError::Source::kDevice, code, fmt::format("CUDA error {} ({})", code, cuda_error_name(code)));
  }
}

void DeviceFaults::device_work(std::chrono::nanoseconds took) {
  if (!control_) return;
  auto slow = control_->armed(CB_SLOWDOWN);
  if (!slow || slow->factor_milli <= 1000) return;
  const std::int64_t extra = took.count() * (slow->factor_milli - 1000) / 1000;
  const std::int64_t debt = slow_debt_ns_.fetch_add(extra) + extra;
  if (debt < kMinSleepNs) return;
  slow_debt_ns_.fetch_sub(debt);
  if (control_->fired(CB_SLOWDOWN) == 0) control_->record_fired(CB_SLOWDOWN);
  std::this_thread::sleep_for(std::chrono::nanoseconds(debt));
}

void DeviceFaults::collective() {
  if (!control_) return;
  if (auto err = control_->armed(CB_COLL_ERROR); err && control_->take_shot(CB_COLL_ERROR)) {
    const int code = static_cast<int>(err->error_code);
    throw DeviceError(DeviceError::Source::kCollective, code,
                      fmt::format("NCCL error {} ({}) in allreduce", code, nccl_error_name(code)));
  }
  if (control_->armed(CB_COLL_HANG)) {
    control_->record_fired(CB_COLL_HANG);
    wait_while_armed(CB_COLL_HANG);
  }
}

std::optional<BitflipShot> DeviceFaults::bitflip(cb_bitflip_tensor tensor) {
  if (!control_) return std::nullopt;
  auto flip = control_->armed(CB_BITFLIP);
  if (!flip || flip->tensor != tensor || !control_->take_shot(CB_BITFLIP)) return std::nullopt;
  BitflipShot shot;
  shot.seed = flip->seed ^ (flip->sequence << 32) ^ bitflip_shots_.fetch_add(1);
  shot.bits = static_cast<int>(std::max<std::int64_t>(1, flip->bits));
  return shot;
}

std::optional<std::string> DeviceFaults::sticky_error() const {
  if (!latched_.load()) return std::nullopt;
  return fmt::format("CUDA error {} ({}), Xid {}", sticky_code_.load(), cuda_error_name(sticky_code_.load()),
                     sticky_xid_.load());
}

std::vector<FlippedBit> flip_bits(float* host, std::size_t n, const BitflipShot& shot) {
  std::vector<FlippedBit> out;
  if (n == 0) return out;
  std::uint64_t state = shot.seed;
  std::unordered_set<std::uint64_t> taken;
  const std::uint64_t total = static_cast<std::uint64_t>(n) * 32;
  const auto wanted = std::min<std::uint64_t>(static_cast<std::uint64_t>(shot.bits), total);
  while (out.size() < wanted) {
    const std::uint64_t pick = splitmix64(state) % total;
    if (!taken.insert(pick).second) continue;
    FlippedBit f{static_cast<std::size_t>(pick / 32), static_cast<int>(pick % 32)};
    std::uint32_t word;
    static_assert(sizeof word == sizeof(float));
    std::memcpy(&word, host + f.index, sizeof word);
    word ^= 1u << f.bit;
    std::memcpy(host + f.index, &word, sizeof word);
    out.push_back(f);
  }
  return out;
}

}  // namespace chaosbench::bench
