// The interposer's shared state and fault actions (interposer.h): the mapped control block,
// the sticky CB_XID latch, hang waits, slowdown sleeps, bit flips, and where each hook's
// real function comes from.
#include "faults/gpu/interposer/interposer.h"

#include <algorithm>
#include <array>
#include <cstdarg>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <string>

#include <dlfcn.h>
#include <unistd.h>

namespace chaosbench::faults::gpu::interposer {

std::atomic<std::int64_t> g_sticky_error{kNotLatched};
__thread int tl_runtime_depth __attribute__((tls_model("initial-exec"))) = 0;
__thread int tl_injected_runtime_error __attribute__((tls_model("initial-exec"))) = 0;

namespace {

// One write(2) per line, so that the lines of several ranks sharing a terminal stay whole.
__attribute__((format(printf, 1, 2))) void say(const char* format, ...) {
  char line[512];
  va_list args;
  va_start(args, format);
  const int n = std::vsnprintf(line, sizeof line, format, args);
  va_end(args);
  if (n > 0) (void)!::write(2, line, std::min<std::size_t>(static_cast<std::size_t>(n), sizeof line - 1));
}

// Names of the codes a CB_XID arming is likely to carry (cudaError_t; the CUresult of the
// same value means the same, CUDA_ERROR_ECC_UNCORRECTABLE for 214 and so on).
const char* error_name(std::int64_t code) {
  switch (code) {
    case 2: return "cudaErrorMemoryAllocation";
    case 3: return "cudaErrorInitializationError";
    case 46: return "cudaErrorDevicesUnavailable";
    case 100: return "cudaErrorNoDevice";
    case 201: return "cudaErrorDeviceUninitialized";
    case 214: return "cudaErrorECCUncorrectable";
    case 220: return "cudaErrorNvlinkUncorrectable";
    case 700: return "cudaErrorIllegalAddress";
    case 702: return "cudaErrorLaunchTimeout";
    case 709: return "cudaErrorContextIsDestroyed";
    case 710: return "cudaErrorAssert";
    case 714: return "cudaErrorHardwareStackError";
    case 715: return "cudaErrorIllegalInstruction";
    case 716: return "cudaErrorMisalignedAddress";
    case 719: return "cudaErrorLaunchFailure";
    case 802: return "cudaErrorSystemNotReady";
    case 909: return "cudaErrorTimeout";
    case 999: return "cudaErrorUnknown";
    default: return "unnamed";
  }
}

void sleep_for(std::chrono::nanoseconds duration) {
  if (duration <= std::chrono::nanoseconds::zero()) return;
  timespec deadline{};
  clock_gettime(CLOCK_MONOTONIC, &deadline);
  const auto total = std::chrono::nanoseconds(deadline.tv_nsec) + duration;
  deadline.tv_sec += static_cast<time_t>(std::chrono::duration_cast<std::chrono::seconds>(total).count());
  deadline.tv_nsec = static_cast<long>((total % std::chrono::seconds(1)).count());
  while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &deadline, nullptr) != 0) {
    // EINTR: a signal handler ran; keep the same deadline.
  }
}

std::uint64_t splitmix64(std::uint64_t& state) {
  std::uint64_t z = (state += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

// Where a library is found when RTLD_NEXT does not see it (dlopen'ed RTLD_LOCAL): by the
// sonames the process may already have loaded.
std::span<const char* const> sonames(Library library) {
  static constexpr const char* kRuntime[] = {"libcudart.so.13", "libcudart.so.12", "libcudart.so.11.0", "libcudart.so"};
  static constexpr const char* kDriver[] = {"libcuda.so.1"};
  static constexpr const char* kNccl[] = {"libnccl.so.2"};
  switch (library) {
    case Library::kCudaRuntime: return kRuntime;
    case Library::kCudaDriver: return kDriver;
    case Library::kNccl: return kNccl;
  }
  return {};
}

void* lookup_real(const char* name, Library library) {
  const DlsymFn dlsym_fn = real_dlsym();
  if (dlsym_fn == nullptr) return nullptr;
  // From this library RTLD_NEXT means "the definition after ours": the real one.
  if (void* fn = dlsym_fn(RTLD_NEXT, name)) return fn;
  for (const char* soname : sonames(library)) {
    void* handle = ::dlopen(soname, RTLD_LAZY | RTLD_NOLOAD);
    if (handle == nullptr) continue;
    void* fn = dlsym_fn(handle, name);
    ::dlclose(handle);
    if (fn != nullptr) return fn;
  }
  return nullptr;
}

const Hook* find_hook(const char* name) {
  if (name == nullptr || name[0] == '\0') return nullptr;
  for (auto table : {runtime_hooks(), driver_hooks(), nccl_hooks()}) {
    for (const Hook& hook : table) {
      if (std::strcmp(hook.name, name) == 0) return &hook;
    }
  }
  return nullptr;
}

}  // namespace

FaultControl* control() {
  // Mapped once and never unmapped: hooks may still run while the process exits.
  static FaultControl* const instance = [] {
    std::string why;
    std::unique_ptr<FaultControl> opened;
    try {
      opened = FaultControl::from_env(&why);
    } catch (...) {
      why = "cannot map the control block";
    }
    if (!opened && !why.empty()) say("chaosbench: %s: %s; CUDA calls pass through\n", CB_CONTROL_ENV, why.c_str());
    return opened.release();
  }();
  return instance;
}

std::optional<std::int64_t> latch_sticky_error(FaultControl& control) {
  const auto xid = control.armed(CB_XID);
  if (!xid) return std::nullopt;
  // A zero code would make every call "succeed" without running; report unknown instead.
  const std::int64_t code = xid->error_code != 0 ? xid->error_code : 999;
  std::int64_t expected = kNotLatched;
  if (!g_sticky_error.compare_exchange_strong(expected, code)) return expected;  // another thread won
  control.record_fired(CB_XID);
  say("chaosbench: injected CUDA error %lld (%s), Xid %lld\n", static_cast<long long>(code), error_name(code),
      static_cast<long long>(xid->xid));
  return code;
}

void wait_while_armed(FaultControl& control, cb_fault_kind kind) {
  bool recorded = false;
  while (control.armed(kind)) {
    if (!recorded) control.record_fired(kind);
    recorded = true;
    sleep_for(std::chrono::milliseconds(10));
  }
}

void note_not_ready(FaultControl& control, std::uint64_t sequence) {
  static std::atomic<std::uint64_t> noted{0};
  std::uint64_t seen = noted.load(std::memory_order_relaxed);
  if (seen != sequence && noted.compare_exchange_strong(seen, sequence)) control.record_fired(CB_HANG);
}

void stretch(std::int64_t factor_milli, std::chrono::nanoseconds took) {
  if (factor_milli <= 1000) return;
  sleep_for(took * (factor_milli - 1000) / 1000);
}

void maybe_flip_bits(FaultControl& control, HostBuffer buffer) {
  constexpr std::uint64_t kMaxBits = 256;  // per shot; a corruption, not a wipe
  const auto armed = control.armed(CB_BITFLIP);
  if (!armed || buffer.bytes == 0 || !control.take_shot(CB_BITFLIP)) return;
  const std::uint64_t shot = control.fired(CB_BITFLIP);
  const std::uint64_t total = static_cast<std::uint64_t>(buffer.bytes) * 8;
  const std::uint64_t wanted = armed->bits < 1 ? 1 : static_cast<std::uint64_t>(armed->bits);
  const std::uint64_t n = std::min({wanted, total, kMaxBits});
  std::uint64_t state = armed->seed ^ (shot * 0xD1B54A32D192ED03ull);
  std::array<std::uint64_t, kMaxBits> chosen{};
  auto* bytes = static_cast<unsigned char*>(buffer.data);
  for (std::uint64_t i = 0; i < n; ++i) {
    std::uint64_t bit = 0;
    do {
      bit = splitmix64(state) % total;
    } while (std::find(chosen.begin(), chosen.begin() + static_cast<std::ptrdiff_t>(i), bit) !=
             chosen.begin() + static_cast<std::ptrdiff_t>(i));
    chosen[i] = bit;
    bytes[bit / 8] ^= static_cast<unsigned char>(1u << (bit % 8));
  }
}

void* resolve(RealSymbol& symbol) {
  if (void* fn = symbol.fn.load(std::memory_order_acquire)) return fn;
  void* fn = lookup_real(symbol.name, symbol.library);
  if (fn == nullptr) {
    if (!symbol.missing_said.exchange(true)) say("chaosbench: no real %s is loaded; the call fails\n", symbol.name);
    return nullptr;
  }
  void* expected = nullptr;
  return symbol.fn.compare_exchange_strong(expected, fn) ? fn : expected;
}

bool adopt(RealSymbol& symbol, void* fn) {
  void* expected = nullptr;
  return symbol.fn.compare_exchange_strong(expected, fn) || expected == fn;
}

void* hook_for(const char* name, void* fn) {
  const Hook* hook = find_hook(name);
  // fn is our own hook when the lookup went through the global scope, which holds us.
  if (hook == nullptr || fn == nullptr || fn == hook->hook) return fn;
  return adopt(*hook->real, fn) ? hook->hook : fn;
}

bool debug() {
  static const bool on = [] {
    const char* v = std::getenv("CHAOSBENCH_INTERPOSER_DEBUG");
    return v != nullptr && *v != '\0' && std::strcmp(v, "0") != 0;
  }();
  return on;
}

void debug_say(const char* what, const char* name) {
  if (debug()) say("chaosbench: interposer: %s %s\n", what, name);
}

}  // namespace chaosbench::faults::gpu::interposer
