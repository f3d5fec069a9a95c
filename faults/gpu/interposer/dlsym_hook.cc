// The interposer's dlsym override. The CUDA runtime (shared, or linked statically into NCCL,
// PyTorch, ...) reaches the driver by dlopen("libcuda.so.1") and then
// dlsym(handle, "cuGetProcAddress_v2"); a lookup through an explicit handle searches that
// library and its dependencies only, never a preloaded library, so the driver hooks can
// only be handed out by intercepting dlsym itself. This file does that for explicit
// handles: dlsym(handle, "cuGetProcAddress_v2"), dlsym(handle, "cuMemAlloc_v2"),
// dlsym(handle, "ncclAllReduce") return our hook, which then calls the definition glibc found.
//
// dlsym(RTLD_NEXT, ...) and dlsym(RTLD_DEFAULT, ...) depend on who calls (which object is
// "next", whose local scope is searched). A C++ forwarder would make glibc see this library
// as the caller: every RTLD_NEXT lookup in the process would become relative to us, and an
// interposer loaded after us would find itself and loop. So `dlsym` is a few instructions of
// assembly that tail-jump to glibc's dlsym for those two handles, leaving the original
// return address in place, and jump to cb_dlsym_with_handle for the rest. Written for
// x86-64 and AArch64; elsewhere dlsym is not overridden (the driver is then reached only
// through the exported cu* hooks and cuGetProcAddress, see docs/gpu-faults-interposer.md).
#include <cstring>

#include <dlfcn.h>

#include "faults/gpu/interposer/interposer.h"

extern "C" {
// glibc's dlsym, found once (cb_resolve_real_dlsym) and read by the assembly below.
__attribute__((visibility("hidden"))) void* cb_real_dlsym = nullptr;
__attribute__((visibility("hidden"), used)) void* cb_resolve_real_dlsym();
__attribute__((visibility("hidden"), used)) void* cb_dlsym_with_handle(void* handle, const char* name);
}

void* cb_resolve_real_dlsym() {
  if (void* fn = __atomic_load_n(&cb_real_dlsym, __ATOMIC_ACQUIRE)) return fn;
  void* fn = nullptr;
  // glibc >= 2.34 defines dlsym in libc (GLIBC_2.34, with the old versions as aliases);
  // older ones in libdl (GLIBC_2.2.5 on x86-64, GLIBC_2.17 on AArch64).
  for (const char* version : {"GLIBC_2.34", "GLIBC_2.2.5", "GLIBC_2.17"}) {
    fn = ::dlvsym(RTLD_NEXT, "dlsym", version);
    if (fn != nullptr) break;
  }
  __atomic_store_n(&cb_real_dlsym, fn, __ATOMIC_RELEASE);
  return fn;
}

void* cb_dlsym_with_handle(void* handle, const char* name) {
  const auto real = reinterpret_cast<chaosbench::faults::gpu::interposer::DlsymFn>(cb_resolve_real_dlsym());
  if (real == nullptr) return nullptr;
  void* fn = real(handle, name);
  if (fn == nullptr || name == nullptr) return fn;
  // Every hooked name starts with "cu" (cuda*, cu*) or "nccl"; most lookups stop here.
  if (std::strncmp(name, "cu", 2) != 0 && std::strncmp(name, "nccl", 4) != 0) return fn;
  void* handed = chaosbench::faults::gpu::interposer::hook_for(name, fn);
  if (handed != fn) chaosbench::faults::gpu::interposer::debug_say("dlsym: wrapped", name);
  return handed;
}

namespace chaosbench::faults::gpu::interposer {
DlsymFn real_dlsym() { return reinterpret_cast<DlsymFn>(cb_resolve_real_dlsym()); }
}  // namespace chaosbench::faults::gpu::interposer

// RTLD_DEFAULT is 0 and RTLD_NEXT is -1 on both architectures. If glibc's dlsym is not yet
// known, resolve it with the arguments saved, then jump. endbr64 / bti c make the entry a
// valid indirect-branch target under CET/BTI (no-ops on older CPUs).
#if defined(__x86_64__)
asm(R"(
  .text
  .globl dlsym
  .type dlsym, @function
  .p2align 4
dlsym:
  .cfi_startproc
  endbr64
  cmpq $-1, %rdi
  je 1f
  testq %rdi, %rdi
  je 1f
  jmp cb_dlsym_with_handle
1:
  movq cb_real_dlsym(%rip), %rax
  testq %rax, %rax
  je 2f
  jmp *%rax
2:
  pushq %rdi
  .cfi_adjust_cfa_offset 8
  pushq %rsi
  .cfi_adjust_cfa_offset 8
  subq $8, %rsp
  .cfi_adjust_cfa_offset 8
  call cb_resolve_real_dlsym
  addq $8, %rsp
  .cfi_adjust_cfa_offset -8
  popq %rsi
  .cfi_adjust_cfa_offset -8
  popq %rdi
  .cfi_adjust_cfa_offset -8
  testq %rax, %rax
  je 3f
  jmp *%rax
3:
  ret
  .cfi_endproc
  .size dlsym, .-dlsym
)");
#elif defined(__aarch64__)
asm(R"(
  .text
  .globl dlsym
  .type dlsym, %function
  .p2align 2
dlsym:
  .cfi_startproc
  hint #34
  cmn x0, #1
  b.eq 1f
  cbz x0, 1f
  b cb_dlsym_with_handle
1:
  adrp x16, cb_real_dlsym
  ldr x16, [x16, :lo12:cb_real_dlsym]
  cbz x16, 2f
  br x16
2:
  stp x29, x30, [sp, #-32]!
  .cfi_def_cfa_offset 32
  .cfi_offset 29, -32
  .cfi_offset 30, -24
  mov x29, sp
  stp x0, x1, [sp, #16]
  bl cb_resolve_real_dlsym
  mov x16, x0
  ldp x0, x1, [sp, #16]
  ldp x29, x30, [sp], #32
  .cfi_def_cfa_offset 0
  .cfi_restore 29
  .cfi_restore 30
  cbz x16, 3f
  br x16
3:
  mov x0, #0
  ret
  .cfi_endproc
  .size dlsym, .-dlsym
)");
#endif
