// C++ access to the GPU fault control block (control_block.h): the harness arms and
// disarms through it (faults/gpu/gpu_fault.cc), the built-in workloads and the CUDA/NCCL
// interposer read it. Header-only and dependent on POSIX alone, so the interposer (a
// shared library preloaded into any program) can use it without linking anything.
//
// Contract: see control_block.h. Every method is safe from any thread of any process
// mapping the same file; none blocks except open (a few syscalls).
#pragma once

#include <atomic>
#include <cerrno>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <memory>
#include <optional>
#include <string>

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/types.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/gpu/control_block.h"

namespace chaosbench::common {

// The parameters of one slot, as read under one arming.
struct ArmedFault {
  std::uint64_t sequence = 0;  // the arming it belongs to (non-zero)
  std::int64_t error_code = 0;
  std::int64_t xid = 0;
  std::int64_t factor_milli = 1000;
  std::int64_t shots = -1;
  std::int64_t bits = 1;
  std::int64_t tensor = CB_TENSOR_GRADIENTS;
  std::uint64_t seed = 0;
  std::uint64_t armed_at_ns = 0;
};

inline std::uint64_t realtime_ns() {
  timespec ts{};
  clock_gettime(CLOCK_REALTIME, &ts);
  return static_cast<std::uint64_t>(ts.tv_sec) * 1000000000ull + static_cast<std::uint64_t>(ts.tv_nsec);
}

class FaultControl {
 public:
  // Maps an existing control file; nullptr (with the reason in *why when given) when it
  // is missing, too short or not a control block.
  static std::unique_ptr<FaultControl> open(const std::string& path, std::string* why = nullptr) {
    const int fd = ::open(path.c_str(), O_RDWR | O_CLOEXEC | O_NOCTTY);
    if (fd < 0) return fail(why, path + ": " + std::strerror(errno));
    struct stat st {};
    if (fstat(fd, &st) != 0 || st.st_size < static_cast<off_t>(CB_CONTROL_SIZE)) {
      ::close(fd);
      return fail(why, path + ": not a fault control block (too short)");
    }
    void* p = mmap(nullptr, CB_CONTROL_SIZE, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    ::close(fd);
    if (p == MAP_FAILED) return fail(why, path + ": mmap: " + std::strerror(errno));
    auto* block = static_cast<cb_control_block*>(p);
    if (load(block->magic) != CB_CONTROL_MAGIC || load(block->version) != CB_CONTROL_VERSION) {
      munmap(p, CB_CONTROL_SIZE);
      return fail(why, path + ": not a version " + std::to_string(CB_CONTROL_VERSION) + " fault control block");
    }
    return std::unique_ptr<FaultControl>(new FaultControl(block));
  }

  // The block named by $CHAOSBENCH_FAULT_CONTROL, or nullptr when unset or unusable.
  static std::unique_ptr<FaultControl> from_env(std::string* why = nullptr) {
    const char* path = std::getenv(CB_CONTROL_ENV);
    if (!path || !*path) return nullptr;
    return open(path, why);
  }

  // Creates a zero-filled control block for `rank`: a memfd sealed against any change of
  // size (a rank that truncates it cannot make a mapping of it fault), and at `path` (which
  // must not exist) a link to it (/proc/<pid>/fd/<fd>), which a process may open when it
  // can read this one's /proc entries (root, or the same user). Harness side.
  // Returns the memfd, which the caller keeps open for as long as the block is used (the
  // link dangles once it is closed), or -1 with errno set. Throws nothing.
  static int create(const std::string& path, std::uint64_t rank) {
    const int fd = ::memfd_create("chaosbench-fault-control", MFD_CLOEXEC | MFD_ALLOW_SEALING);
    if (fd < 0) return -1;
    cb_control_block block{};
    block.magic = CB_CONTROL_MAGIC;
    block.version = CB_CONTROL_VERSION;
    block.rank = rank;
    char page[CB_CONTROL_SIZE] = {};
    std::memcpy(page, &block, sizeof block);
    const std::string target = "/proc/" + std::to_string(::getpid()) + "/fd/" + std::to_string(fd);
    const bool ok = ::write(fd, page, sizeof page) == static_cast<ssize_t>(sizeof page) &&
                    ::fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL) == 0 &&
                    ::symlink(target.c_str(), path.c_str()) == 0;
    if (ok) return fd;
    const int saved = errno;
    ::close(fd);
    errno = saved;
    return -1;
  }

  ~FaultControl() { munmap(block_, CB_CONTROL_SIZE); }
  FaultControl(const FaultControl&) = delete;
  FaultControl& operator=(const FaultControl&) = delete;

  std::uint64_t rank() const { return load(block_->rank); }

  // The slot's parameters when armed, else nullopt. One acquire load when not armed.
  // The parameters are those of one arming: read again when the harness re-armed the
  // slot meanwhile (the sequence changed).
  std::optional<ArmedFault> armed(cb_fault_kind kind) const {
    const cb_fault_slot& s = block_->slots[kind];
    std::atomic_ref<std::uint64_t> armed_ref(const_cast<std::uint64_t&>(s.armed));
    while (true) {
      const std::uint64_t seq = armed_ref.load(std::memory_order_acquire);
      if (seq == 0) return std::nullopt;
      ArmedFault f = read_slot(s, seq);
      std::atomic_thread_fence(std::memory_order_acquire);
      if (armed_ref.load(std::memory_order_relaxed) == seq) return f;
    }
  }

 private:
  static ArmedFault read_slot(const cb_fault_slot& s, std::uint64_t seq) {
    ArmedFault f;
    f.sequence = seq;
    f.error_code = load(s.error_code);
    f.xid = load(s.xid);
    f.factor_milli = load(s.factor_milli);
    f.shots = load(s.shots);
    f.bits = load(s.bits);
    f.tensor = load(s.tensor);
    f.seed = load(s.seed);
    f.armed_at_ns = load(s.armed_at_ns);
    return f;
  }

 public:
  // Takes one shot of an armed slot: true when this call should inject (unlimited, or a
  // shot was left and is now ours). Records the injection (fired, times) when it does.
  bool take_shot(cb_fault_kind kind) {
    cb_fault_slot& s = block_->slots[kind];
    if (std::atomic_ref<std::uint64_t>(s.armed).load(std::memory_order_acquire) == 0) return false;
    std::atomic_ref<std::int64_t> shots(s.shots);
    std::int64_t n = shots.load();
    while (true) {
      if (n == 0) return false;
      if (n < 0) break;
      if (shots.compare_exchange_weak(n, n - 1)) break;
    }
    record_fired(kind);
    return true;
  }

  // Notes an injection under the current arming (for the harness's effect report).
  void record_fired(cb_fault_kind kind) {
    cb_fault_slot& s = block_->slots[kind];
    const std::uint64_t now = realtime_ns();
    std::atomic_ref<std::uint64_t>(s.fired).fetch_add(1);
    std::uint64_t zero = 0;
    std::atomic_ref<std::uint64_t>(s.first_fired_ns).compare_exchange_strong(zero, now);
    std::atomic_ref<std::uint64_t>(s.last_fired_ns).store(now);
  }

  // Harness side: puts `f` in effect in its slot, with a new sequence number. Resets the
  // slot's fired counters. Returns the sequence number.
  std::uint64_t arm(cb_fault_kind kind, const ArmedFault& f) {
    cb_fault_slot& s = block_->slots[kind];
    std::atomic_ref<std::uint64_t>(s.armed).store(0, std::memory_order_relaxed);
    std::atomic_thread_fence(std::memory_order_release);  // 0 is seen before any new parameter
    store(s.error_code, f.error_code);
    store(s.xid, f.xid);
    store(s.factor_milli, f.factor_milli);
    store(s.shots, f.shots);
    store(s.bits, f.bits);
    store(s.tensor, f.tensor);
    store(s.seed, f.seed);
    store(s.armed_at_ns, realtime_ns());
    store(s.fired, std::uint64_t{0});
    store(s.first_fired_ns, std::uint64_t{0});
    store(s.last_fired_ns, std::uint64_t{0});
    const std::uint64_t seq = std::atomic_ref<std::uint64_t>(block_->arm_sequence).fetch_add(1) + 1;
    std::atomic_ref<std::uint64_t>(s.armed).store(seq, std::memory_order_release);
    return seq;
  }

  // Harness side: takes the slot out of effect. Idempotent.
  void disarm(cb_fault_kind kind) {
    std::atomic_ref<std::uint64_t>(block_->slots[kind].armed).store(0, std::memory_order_release);
  }

  // Harness side: disarms the slot only while it still holds arming `sequence` (a later
  // fault of the same kind on the same rank replaced it: that one stays). True when the
  // slot held it.
  bool disarm_if(cb_fault_kind kind, std::uint64_t sequence) {
    return std::atomic_ref<std::uint64_t>(block_->slots[kind].armed).compare_exchange_strong(sequence, 0);
  }

  // The arming in the slot now (0: none).
  std::uint64_t sequence(cb_fault_kind kind) const {
    return std::atomic_ref<std::uint64_t>(const_cast<std::uint64_t&>(block_->slots[kind].armed)).load();
  }

  // What the workload reported of the slot's last arming.
  std::uint64_t fired(cb_fault_kind kind) const { return load(block_->slots[kind].fired); }
  std::uint64_t first_fired_ns(cb_fault_kind kind) const { return load(block_->slots[kind].first_fired_ns); }

 private:
  explicit FaultControl(cb_control_block* b) : block_(b) {}
  static std::unique_ptr<FaultControl> fail(std::string* why, std::string text) {
    if (why) *why = std::move(text);
    return nullptr;
  }
  template <class T>
  static T load(const T& v) {
    return std::atomic_ref<T>(const_cast<T&>(v)).load(std::memory_order_relaxed);
  }
  template <class T>
  static void store(T& v, T x) {
    std::atomic_ref<T>(v).store(x, std::memory_order_relaxed);
  }

  cb_control_block* block_;
};

}  // namespace chaosbench::common
