// A CUDA driver API program for the interposer tests (tests/faults/cuda_interposer_test.cc). Linked
// against libcuda.so.1 (the toolkit's stub at link time; at run time the test chooses with
// LD_LIBRARY_PATH: the stub, which answers 34 to everything, or fake_cuda_driver.cc). Calls
// what its arguments name and prints one line per call: the code, then any detail.
//
// It reaches the driver the three ways programs do, so each interposer path is exercised:
//   cuinit cumemalloc cusync dtoh  direct calls (bound to the exported symbols)
//   dl-cumemalloc                  dlopen("libcuda.so.1") + dlsym(handle, "cuMemAlloc_v2")
//   gp-cumemalloc gp-cusync        dlsym(handle, "cuGetProcAddress_v2"), then
//                                  cuGetProcAddress("cuMemAlloc" / "cuCtxSynchronize", 13000),
//                                  as the CUDA runtime does
//   cusync gp-cusync -> "<code> <milliseconds>";  dtoh -> "<code> <bits set in 64 bytes>"
#include <bit>
#include <chrono>
#include <cstdio>
#include <cstring>

#include <cuda.h>
#include <dlfcn.h>

namespace {

using GetProcAddress = CUresult (*)(const char*, void**, int, cuuint64_t, CUdriverProcAddressQueryResult*);

void* driver() {
  static void* handle = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  return handle;
}

// The entry point `name` as the runtime gets it, or nullptr (and the lookup's code printed).
void* entry_point(const char* name) {
  auto get = reinterpret_cast<GetProcAddress>(driver() ? dlsym(driver(), "cuGetProcAddress_v2") : nullptr);
  if (get == nullptr) {
    std::printf("-1 no cuGetProcAddress_v2\n");
    return nullptr;
  }
  void* fn = nullptr;
  CUdriverProcAddressQueryResult status{};
  const CUresult e = get(name, &fn, 13000, CU_GET_PROC_ADDRESS_DEFAULT, &status);
  if (e != CUDA_SUCCESS || fn == nullptr) std::printf("%d\n", static_cast<int>(e));
  return e == CUDA_SUCCESS ? fn : nullptr;
}

double ms_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
}

int run(const char* op) {
  CUdeviceptr p = 0;
  if (std::strcmp(op, "cuinit") == 0) {
    std::printf("%d\n", static_cast<int>(cuInit(0)));
  } else if (std::strcmp(op, "cumemalloc") == 0) {
    std::printf("%d\n", static_cast<int>(cuMemAlloc(&p, 1 << 20)));
  } else if (std::strcmp(op, "cusync") == 0) {
    const auto start = std::chrono::steady_clock::now();
    const CUresult e = cuCtxSynchronize();
    std::printf("%d %.1f\n", static_cast<int>(e), ms_since(start));
  } else if (std::strcmp(op, "dtoh") == 0) {
    unsigned char host[64] = {};
    const CUresult e = cuMemcpyDtoH(host, 0x1000, sizeof host);
    int bits = 0;
    for (unsigned char b : host) bits += std::popcount(b);
    std::printf("%d %d\n", static_cast<int>(e), bits);
  } else if (std::strcmp(op, "dl-cumemalloc") == 0) {
    auto fn = reinterpret_cast<CUresult (*)(CUdeviceptr*, size_t)>(driver() ? dlsym(driver(), "cuMemAlloc_v2") : nullptr);
    std::printf("%d\n", fn ? static_cast<int>(fn(&p, 1 << 20)) : -1);
  } else if (std::strcmp(op, "gp-cumemalloc") == 0) {
    if (auto fn = reinterpret_cast<CUresult (*)(CUdeviceptr*, size_t)>(entry_point("cuMemAlloc"))) {
      std::printf("%d\n", static_cast<int>(fn(&p, 1 << 20)));
    }
  } else if (std::strcmp(op, "gp-cusync") == 0) {
    // At version 13000 "cuCtxSynchronize" is cuCtxSynchronize_v2(CUcontext).
    if (auto fn = reinterpret_cast<CUresult (*)(CUcontext)>(entry_point("cuCtxSynchronize"))) {
      const auto start = std::chrono::steady_clock::now();
      const CUresult e = fn(nullptr);
      std::printf("%d %.1f\n", static_cast<int>(e), ms_since(start));
    }
  } else {
    std::fprintf(stderr, "cuda_driver_probe: unknown call %s\n", op);
    return 2;
  }
  std::fflush(stdout);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  for (int i = 1; i < argc; ++i) {
    if (const int rc = run(argv[i]); rc != 0) return rc;
  }
  return 0;
}
