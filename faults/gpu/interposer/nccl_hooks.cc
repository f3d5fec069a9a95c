// The NCCL hooks: the collectives and point-to-point calls (nccl.h prototypes) carry
// CB_COLL_ERROR (the call returns error_code, an ncclResult_t, when a shot is taken) and
// CB_COLL_HANG (the call blocks while armed). A collective error is also latched for its
// communicator, so ncclCommGetAsyncError reports it as NCCL reports a failed operation,
// and PyTorch's NCCL watchdog sees it; ncclCommAbort/ncclCommDestroy forget it.
//
// With the sticky CB_XID error latched, collectives return ncclUnhandledCudaError (what NCCL
// returns when its own CUDA calls fail) without calling NCCL. NCCL's internal CUDA calls go
// through the driver hooks, so GPU faults reach NCCL's work as well.
#include <mutex>
#include <optional>

#include <nccl.h>

#include "faults/gpu/interposer/interposer.h"

namespace chaosbench::faults::gpu::interposer {
namespace {

// Communicators whose collective was failed, and with what. A handful at most.
class CommErrors {
 public:
  void latch(ncclComm_t comm, ncclResult_t error) {
    std::lock_guard lock(mutex_);
    Entry* free_entry = nullptr;
    for (Entry& e : entries_) {
      if (e.used && e.comm == comm) return;  // the first error stays, as in NCCL
      if (!e.used && free_entry == nullptr) free_entry = &e;
    }
    if (free_entry == nullptr) return;  // table full: the call still fails, only not latched
    *free_entry = Entry{true, comm, error};
    count_.fetch_add(1, std::memory_order_release);
  }
  std::optional<ncclResult_t> find(ncclComm_t comm) {
    if (count_.load(std::memory_order_acquire) == 0) return std::nullopt;  // the usual case
    std::lock_guard lock(mutex_);
    for (const Entry& e : entries_) {
      if (e.used && e.comm == comm) return e.error;
    }
    return std::nullopt;
  }
  void forget(ncclComm_t comm) {
    if (count_.load(std::memory_order_acquire) == 0) return;
    std::lock_guard lock(mutex_);
    for (Entry& e : entries_) {
      if (e.used && e.comm == comm) {
        e = Entry{};
        count_.fetch_sub(1, std::memory_order_release);
      }
    }
  }

 private:
  struct Entry {
    bool used = false;
    ncclComm_t comm = nullptr;
    ncclResult_t error = ncclSuccess;
  };
  std::mutex mutex_;
  Entry entries_[64];
  std::atomic<int> count_{0};
};

CommErrors& comm_errors() {
  static CommErrors* const errors = new CommErrors;  // never destroyed: hooks may run at exit
  return *errors;
}

// Runs one collective on `comm`: `call` invokes the real function.
template <class Call>
ncclResult_t collective(ncclComm_t comm, Call&& call) {
  FaultControl* ctl = control();
  if (sticky_error(ctl)) return ncclUnhandledCudaError;
  if (ctl == nullptr) return call();
  if (ctl->armed(CB_COLL_HANG)) {
    wait_while_armed(*ctl, CB_COLL_HANG);
    if (sticky_error(ctl)) return ncclUnhandledCudaError;
  }
  if (auto error = ctl->armed(CB_COLL_ERROR); error && ctl->take_shot(CB_COLL_ERROR)) {
    const auto code = error->error_code != 0 ? static_cast<ncclResult_t>(error->error_code) : ncclSystemError;
    comm_errors().latch(comm, code);
    return code;
  }
  return call();
}

template <class... P, class... A>
ncclResult_t forward(RealSymbol& real, ncclResult_t (*self)(P...), A... args) {
  (void)self;
  auto* fn = reinterpret_cast<ncclResult_t (*)(P...)>(resolve(real));
  return fn != nullptr ? fn(args...) : ncclInternalError;
}

#define CB_REAL(name) RealSymbol r_##name{#name, Library::kNccl}
CB_REAL(ncclAllReduce);
CB_REAL(ncclBroadcast);
CB_REAL(ncclBcast);
CB_REAL(ncclReduce);
CB_REAL(ncclAllGather);
CB_REAL(ncclReduceScatter);
CB_REAL(ncclSend);
CB_REAL(ncclRecv);
#if NCCL_VERSION_CODE >= NCCL_VERSION(2, 28, 0)
CB_REAL(ncclAlltoAll);
CB_REAL(ncclGather);
CB_REAL(ncclScatter);
#endif
CB_REAL(ncclCommGetAsyncError);
CB_REAL(ncclCommAbort);
CB_REAL(ncclCommDestroy);
#undef CB_REAL

}  // namespace
}  // namespace chaosbench::faults::gpu::interposer

using namespace chaosbench::faults::gpu::interposer;  // NOLINT: the hooks must be global

CHAOSBENCH_HOOK ncclResult_t ncclAllReduce(const void* send, void* recv, size_t count, ncclDataType_t type,
                                           ncclRedOp_t op, ncclComm_t comm, cudaStream_t stream) {
  return collective(comm, [&] { return forward(r_ncclAllReduce, &ncclAllReduce, send, recv, count, type, op, comm, stream); });
}
CHAOSBENCH_HOOK ncclResult_t ncclBroadcast(const void* send, void* recv, size_t count, ncclDataType_t type, int root,
                                           ncclComm_t comm, cudaStream_t stream) {
  return collective(comm, [&] { return forward(r_ncclBroadcast, &ncclBroadcast, send, recv, count, type, root, comm, stream); });
}
CHAOSBENCH_HOOK ncclResult_t ncclBcast(void* buff, size_t count, ncclDataType_t type, int root, ncclComm_t comm,
                                       cudaStream_t stream) {
  return collective(comm, [&] { return forward(r_ncclBcast, &ncclBcast, buff, count, type, root, comm, stream); });
}
CHAOSBENCH_HOOK ncclResult_t ncclReduce(const void* send, void* recv, size_t count, ncclDataType_t type, ncclRedOp_t op,
                                        int root, ncclComm_t comm, cudaStream_t stream) {
  return collective(comm, [&] { return forward(r_ncclReduce, &ncclReduce, send, recv, count, type, op, root, comm, stream); });
}
CHAOSBENCH_HOOK ncclResult_t ncclAllGather(const void* send, void* recv, size_t count, ncclDataType_t type,
                                           ncclComm_t comm, cudaStream_t stream) {
  return collective(comm, [&] { return forward(r_ncclAllGather, &ncclAllGather, send, recv, count, type, comm, stream); });
}
CHAOSBENCH_HOOK ncclResult_t ncclReduceScatter(const void* send, void* recv, size_t count, ncclDataType_t type,
                                               ncclRedOp_t op, ncclComm_t comm, cudaStream_t stream) {
  return collective(comm, [&] {
    return forward(r_ncclReduceScatter, &ncclReduceScatter, send, recv, count, type, op, comm, stream);
  });
}
CHAOSBENCH_HOOK ncclResult_t ncclSend(const void* send, size_t count, ncclDataType_t type, int peer, ncclComm_t comm,
                                      cudaStream_t stream) {
  return collective(comm, [&] { return forward(r_ncclSend, &ncclSend, send, count, type, peer, comm, stream); });
}
CHAOSBENCH_HOOK ncclResult_t ncclRecv(void* recv, size_t count, ncclDataType_t type, int peer, ncclComm_t comm,
                                      cudaStream_t stream) {
  return collective(comm, [&] { return forward(r_ncclRecv, &ncclRecv, recv, count, type, peer, comm, stream); });
}
#if NCCL_VERSION_CODE >= NCCL_VERSION(2, 28, 0)
CHAOSBENCH_HOOK ncclResult_t ncclAlltoAll(const void* send, void* recv, size_t count, ncclDataType_t type,
                                          ncclComm_t comm, cudaStream_t stream) {
  return collective(comm, [&] { return forward(r_ncclAlltoAll, &ncclAlltoAll, send, recv, count, type, comm, stream); });
}
CHAOSBENCH_HOOK ncclResult_t ncclGather(const void* send, void* recv, size_t count, ncclDataType_t type, int root,
                                        ncclComm_t comm, cudaStream_t stream) {
  return collective(comm, [&] { return forward(r_ncclGather, &ncclGather, send, recv, count, type, root, comm, stream); });
}
CHAOSBENCH_HOOK ncclResult_t ncclScatter(const void* send, void* recv, size_t count, ncclDataType_t type, int root,
                                         ncclComm_t comm, cudaStream_t stream) {
  return collective(comm, [&] { return forward(r_ncclScatter, &ncclScatter, send, recv, count, type, root, comm, stream); });
}
#endif

// The communicator's latched collective error (or, with CB_XID latched, the CUDA failure)
// is its asynchronous error; otherwise NCCL's own answer.
CHAOSBENCH_HOOK ncclResult_t ncclCommGetAsyncError(ncclComm_t comm, ncclResult_t* async_error) {
  std::optional<ncclResult_t> injected = comm_errors().find(comm);
  if (!injected && g_sticky_error.load(std::memory_order_relaxed) != kNotLatched) injected = ncclUnhandledCudaError;
  if (injected && async_error != nullptr) {
    *async_error = *injected;
    return ncclSuccess;
  }
  return forward(r_ncclCommGetAsyncError, &ncclCommGetAsyncError, comm, async_error);
}
CHAOSBENCH_HOOK ncclResult_t ncclCommAbort(ncclComm_t comm) {
  comm_errors().forget(comm);
  return forward(r_ncclCommAbort, &ncclCommAbort, comm);
}
CHAOSBENCH_HOOK ncclResult_t ncclCommDestroy(ncclComm_t comm) {
  comm_errors().forget(comm);
  return forward(r_ncclCommDestroy, &ncclCommDestroy, comm);
}

namespace chaosbench::faults::gpu::interposer {

std::span<const Hook> nccl_hooks() {
#define CB_HOOK_ENTRY(name) Hook{#name, reinterpret_cast<void*>(&::name), &r_##name}
  static const Hook kHooks[] = {
      CB_HOOK_ENTRY(ncclAllReduce),     CB_HOOK_ENTRY(ncclBroadcast), CB_HOOK_ENTRY(ncclBcast),
      CB_HOOK_ENTRY(ncclReduce),        CB_HOOK_ENTRY(ncclAllGather), CB_HOOK_ENTRY(ncclReduceScatter),
      CB_HOOK_ENTRY(ncclSend),          CB_HOOK_ENTRY(ncclRecv),
#if NCCL_VERSION_CODE >= NCCL_VERSION(2, 28, 0)
      CB_HOOK_ENTRY(ncclAlltoAll),      CB_HOOK_ENTRY(ncclGather),    CB_HOOK_ENTRY(ncclScatter),
#endif
      CB_HOOK_ENTRY(ncclCommGetAsyncError), CB_HOOK_ENTRY(ncclCommAbort), CB_HOOK_ENTRY(ncclCommDestroy),
  };
#undef CB_HOOK_ENTRY
  return kHooks;
}

}  // namespace chaosbench::faults::gpu::interposer
