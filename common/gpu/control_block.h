/* The GPU fault control block: the contract between the harness, which arms GPU and
 * collective faults, and whatever carries them out inside a workload (the built-in
 * trainer's and server's device layer, bench/common/device_faults.h; the CUDA/NCCL
 * interposer libchaosbench_cuda.so; any program in any language that maps it).
 *
 * One block per rank, CB_CONTROL_SIZE bytes, created zero-filled with magic, version and
 * rank by the harness before the rank starts. It is a sealed memfd of the harness's
 * (its size can never change, so no rank can make the harness's mapping fault), reached
 * through the link <run dir>/control/rank<R>.ctl -> /proc/<harness pid>/fd/<fd>; the
 * rank finds that path in the environment variable CHAOSBENCH_FAULT_CONTROL and opens it
 * like a file (which needs the rights to read the harness's /proc entries: root, as
 * ranks run today). Both sides mmap it MAP_SHARED, so a change is seen by the next call
 * that reads it (no syscall).
 *
 * One slot per fault kind, so kinds combine (a slowdown and a bit flip at once).
 * Access protocol (every field is a naturally aligned 64-bit word; use atomic loads and
 * stores, __atomic_* in C or std::atomic_ref in C++):
 *   arm:    the harness writes the parameters, then stores `armed` (non-zero: the arm
 *           sequence number, new for every arming) with release order.
 *   read:   a workload loads `armed` with acquire order; non-zero means in effect, and
 *           the parameters read after it are those of that arming.
 *   disarm: the harness stores 0 into `armed` (revert; idempotent).
 *   shots:  -1 means every eligible call while armed; n > 0 means the next n eligible
 *           calls, each taken by a compare-and-swap n -> n-1 (so two threads never take
 *           one shot twice); 0 means spent.
 *   fired / first_fired_ns / last_fired_ns: written by the workload when it injects, so
 *           the harness can report what actually happened (fault effect).
 * Sticky errors (CB_XID) latch inside the process that sees them: disarming stops new
 * processes from failing (the GPU was reset), never the one whose context is lost.
 */
#ifndef CHAOSBENCH_FAULTS_GPU_CONTROL_BLOCK_H
#define CHAOSBENCH_FAULTS_GPU_CONTROL_BLOCK_H

#include <stdint.h>

#define CB_CONTROL_MAGIC 0x3154434250474243ull /* "CBGPCT1" little-endian, plus '1' */
#define CB_CONTROL_VERSION 1u
#define CB_CONTROL_SIZE 4096u
#define CB_CONTROL_ENV "CHAOSBENCH_FAULT_CONTROL"

/* The fault kinds, one slot each. */
enum cb_fault_kind {
  CB_XID = 0,       /* sticky device error: every device call fails with error_code */
  CB_OOM = 1,       /* allocations fail with error_code (2, out of memory) */
  CB_SLOWDOWN = 2,  /* device work takes factor_milli/1000 times as long */
  CB_HANG = 3,      /* device calls block while armed (a kernel that never completes) */
  CB_BITFLIP = 4,   /* flip `bits` random bits of the `tensor` once per shot */
  CB_COLL_ERROR = 5, /* collectives fail with error_code (an ncclResult_t) */
  CB_COLL_HANG = 6, /* collectives block while armed (never return) */
  CB_FAULT_KINDS = 7
};

/* Which tensor CB_BITFLIP corrupts (the built-in trainer's buffers). */
enum cb_bitflip_tensor {
  CB_TENSOR_GRADIENTS = 0,       /* the rank's gradient buffer after the allreduce */
  CB_TENSOR_PARAMETERS = 1,      /* the rank's weights between steps */
  CB_TENSOR_LOCAL_GRADIENTS = 2  /* the rank's own gradients before the allreduce */
};

struct cb_fault_slot {
  uint64_t armed;          /* 0: not in effect; else the arm sequence number */
  int64_t error_code;      /* CB_XID, CB_OOM: cudaError_t/CUresult; CB_COLL_ERROR: ncclResult_t */
  int64_t xid;             /* CB_XID: the Xid the driver would log */
  int64_t factor_milli;    /* CB_SLOWDOWN: 3000 = three times as long */
  int64_t shots;           /* see the access protocol; -1 unlimited */
  int64_t bits;            /* CB_BITFLIP: bits flipped per shot */
  int64_t tensor;          /* CB_BITFLIP: enum cb_bitflip_tensor */
  uint64_t seed;           /* CB_BITFLIP: which elements and bits (with the shot number) */
  uint64_t armed_at_ns;    /* CLOCK_REALTIME when armed */
  uint64_t fired;          /* workload: injections made under this arming */
  uint64_t first_fired_ns; /* workload: CLOCK_REALTIME of the first, 0 before */
  uint64_t last_fired_ns;  /* workload: CLOCK_REALTIME of the latest */
  uint64_t reserved[4];
};

struct cb_control_block {
  uint64_t magic;   /* CB_CONTROL_MAGIC */
  uint64_t version; /* CB_CONTROL_VERSION */
  uint64_t rank;
  uint64_t arm_sequence; /* harness: the last sequence number it used */
  uint64_t reserved[4];
  struct cb_fault_slot slots[CB_FAULT_KINDS];
};

#ifdef __cplusplus
static_assert(sizeof(cb_fault_slot) == 128, "slot layout is part of the contract");
static_assert(sizeof(cb_control_block) <= CB_CONTROL_SIZE, "the block fits its file");
#endif

#endif /* CHAOSBENCH_FAULTS_GPU_CONTROL_BLOCK_H */
