// The core of libchaosbench_cuda.so, the LD_PRELOAD interposer that carries out the GPU
// fault control block (common/gpu/control_block.h) inside any CUDA/NCCL program: where each
// hook's real function is found, and how each family of calls reacts to the armed slots.
// The hooks themselves are thin: runtime_hooks.cc, driver_hooks.cc, nccl_hooks.cc; the
// dlsym override that lets driver entry points be wrapped is dlsym_hook.cc.
//
// Threads: every function here may be called from any thread at any time, including from
// inside the CUDA runtime's and NCCL's own threads; nothing here holds a lock while it
// calls a real function. Disarmed, a hook costs a few relaxed/acquire loads of the mapped
// control block and then a plain call of the real function.
#pragma once

#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <optional>
#include <span>

#include "common/gpu/fault_control.h"

// The hooked symbols are the library's only exports (it is built -fvisibility=hidden).
#define CHAOSBENCH_HOOK extern "C" __attribute__((visibility("default")))

namespace chaosbench::faults::gpu::interposer {

using common::ArmedFault;
using common::FaultControl;

// Which library a hooked symbol belongs to: where its real definition is looked up when
// RTLD_NEXT does not see it (a library dlopen'ed RTLD_LOCAL, as Python loads extensions).
enum class Library { kCudaRuntime, kCudaDriver, kNccl };

// The real function behind one hooked symbol. `fn` is set once, either lazily by resolve()
// or by adopt() when an intercepted dlsym/cuGetProcAddress hands out our hook in its place;
// from then on the hook calls exactly that function.
struct RealSymbol {
  const char* name;
  Library library;
  std::atomic<void*> fn{nullptr};
  std::atomic<bool> missing_said{false};  // "no real X is loaded" said once
};

// The real function, or nullptr when no loaded library defines it.
void* resolve(RealSymbol& symbol);
// Makes `symbol` call `fn`; false when it already calls another function (then the caller
// must hand out `fn` itself, unwrapped).
bool adopt(RealSymbol& symbol, void* fn);

// One hooked symbol, by the name the library exports it under (cuMemAlloc_v2, not cuMemAlloc).
struct Hook {
  const char* name;
  void* hook;
  RealSymbol* real;
};
std::span<const Hook> runtime_hooks();  // runtime_hooks.cc
std::span<const Hook> driver_hooks();   // driver_hooks.cc
std::span<const Hook> nccl_hooks();     // nccl_hooks.cc (empty when built without nccl.h)

// What to hand out for the exported symbol `name` whose real definition is `fn`: our hook
// (which then calls `fn`), or `fn` itself when `name` is not hooked or cannot be adopted.
void* hook_for(const char* name, void* fn);

// With CHAOSBENCH_INTERPOSER_DEBUG=1 in the environment, says on stderr which driver entry
// points were wrapped or left alone; silent otherwise.
bool debug();
void debug_say(const char* what, const char* name);

// glibc's own dlsym, found past this library (dlsym_hook.cc).
using DlsymFn = void* (*)(void*, const char*);
DlsymFn real_dlsym();

// What a family of calls is exposed to (see docs/gpu-faults-interposer.md).
enum class Family {
  kAlloc,   // CB_OOM, CB_XID
  kSync,    // CB_HANG (blocks), CB_SLOWDOWN (stretched), CB_XID
  kLaunch,  // CB_HANG (blocks), CB_XID; never slowed: a launch returns before the work runs
  kQuery,   // CB_HANG (answers "not ready", never blocks), CB_XID
  kOther,   // CB_XID only
};

// A device-to-host copy's destination, for CB_BITFLIP.
struct HostBuffer {
  void* data = nullptr;
  std::size_t bytes = 0;
};

// The process's control block, mapped on first use from $CHAOSBENCH_FAULT_CONTROL;
// nullptr (all calls pass through) when unset or unusable (said once on stderr).
FaultControl* control();

// The latched CB_XID error, or nullopt. Latches (once per process, with the stderr line and
// record_fired) when the slot is armed; from then on every hooked CUDA call returns it.
constexpr std::int64_t kNotLatched = std::numeric_limits<std::int64_t>::min();
extern std::atomic<std::int64_t> g_sticky_error;
std::optional<std::int64_t> latch_sticky_error(FaultControl& control);
inline std::optional<std::int64_t> sticky_error(FaultControl* control) {
  const std::int64_t code = g_sticky_error.load(std::memory_order_relaxed);
  if (code != kNotLatched) return code;
  if (control == nullptr) return std::nullopt;
  return latch_sticky_error(*control);
}

// Blocks while `kind` is armed, polling every 10 ms; records one firing per blocked call.
void wait_while_armed(FaultControl& control, cb_fault_kind kind);
// Notes a CB_HANG "not ready" answer (once per arming per process, so polling loops do not
// inflate `fired`).
void note_not_ready(FaultControl& control, std::uint64_t sequence);
// Sleeps (factor_milli / 1000 - 1) * took, as a throttled GPU would have made the host wait.
void stretch(std::int64_t factor_milli, std::chrono::nanoseconds took);
// Flips CB_BITFLIP's `bits` distinct bits of `buffer` when a shot is taken.
void maybe_flip_bits(FaultControl& control, HostBuffer buffer);

// Runtime hooks call the runtime, which may call the driver through our driver hooks (or
// another exported runtime function): every hook passes straight through while a runtime
// hook is running on the thread, so a fault acts once per API call (a slowdown is not
// applied twice, one OOM shot not taken twice).
enum class Layer { kRuntime, kDriver };
// __thread, not thread_local: a plain initial-exec TLS word, no wrapper call per access.
extern __thread int tl_runtime_depth __attribute__((tls_model("initial-exec")));
// The error a runtime hook injected on this thread (never reaching the runtime), for the
// thread's next cudaGetLastError / cudaPeekAtLastError, as the runtime records its own.
extern __thread int tl_injected_runtime_error __attribute__((tls_model("initial-exec")));

constexpr int kCudaNotReady = 600;  // cudaErrorNotReady == CUDA_ERROR_NOT_READY

// Runs one hooked CUDA call: `call` invokes the real function and returns its result, R is
// cudaError_t or CUresult (whose values coincide for every code used here).
template <class R, class Call>
R cuda_call(Layer layer, Family family, Call&& call, HostBuffer copied_to_host = {}) {
  if (tl_runtime_depth > 0) return call();
  FaultControl* ctl = control();
  if (auto code = sticky_error(ctl)) return static_cast<R>(*code);
  if (ctl == nullptr) return call();

  std::optional<ArmedFault> slow;
  switch (family) {
    case Family::kAlloc:
      if (auto oom = ctl->armed(CB_OOM); oom && ctl->take_shot(CB_OOM)) {
        const int code = oom->error_code != 0 ? static_cast<int>(oom->error_code) : 2;
        if (layer == Layer::kRuntime) tl_injected_runtime_error = code;
        return static_cast<R>(code);
      }
      break;
    case Family::kQuery:
      if (auto hang = ctl->armed(CB_HANG)) {
        note_not_ready(*ctl, hang->sequence);
        return static_cast<R>(kCudaNotReady);
      }
      break;
    case Family::kSync:
    case Family::kLaunch:
      if (ctl->armed(CB_HANG)) {
        wait_while_armed(*ctl, CB_HANG);
        // The device may have failed while the host waited.
        if (auto code = sticky_error(ctl)) return static_cast<R>(*code);
      }
      if (family == Family::kSync) {
        slow = ctl->armed(CB_SLOWDOWN);
        if (slow && (slow->factor_milli <= 1000 || !ctl->take_shot(CB_SLOWDOWN))) slow.reset();
      }
      break;
    case Family::kOther:
      break;
  }

  // The clock is read only when slowing: a disarmed call costs no clock_gettime.
  const auto start = slow ? std::chrono::steady_clock::now() : std::chrono::steady_clock::time_point{};
  if (layer == Layer::kRuntime) ++tl_runtime_depth;
  const R result = call();
  if (layer == Layer::kRuntime) --tl_runtime_depth;
  if (slow) stretch(slow->factor_milli, std::chrono::steady_clock::now() - start);
  if (copied_to_host.data != nullptr && static_cast<int>(result) == 0) maybe_flip_bits(*ctl, copied_to_host);
  return result;
}

}  // namespace chaosbench::faults::gpu::interposer
