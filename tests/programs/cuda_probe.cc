// A CUDA runtime + NCCL program for the interposer tests (tests/faults/cuda_interposer_test.cc).
// Linked against the real shared libcudart and libnccl; calls what its arguments name, in
// order, and prints one line per call: the returned code, then any detail. A test compares
// the lines with and without LD_PRELOAD=libchaosbench_cuda.so. Without a GPU the real codes
// are the runtime's 35 (insufficient driver) or 100 (no device), and NCCL's own.
//
//   cuda_probe malloc mallochost sync streamsync streamquery launch count lasterror
//              dtoh nccl ncclasync bench
//   dtoh      -> "<code> <bits set in the 64-byte destination>"
//   ncclasync -> "<code> <async error>"
//   sync      -> "<code> <milliseconds>"
//   bench     -> "<code> <nanoseconds per cudaGetDeviceCount>" over 1,000,000 calls
#include <bit>
#include <chrono>
#include <cstdio>
#include <cstring>

#include <cuda_runtime_api.h>
#include <nccl.h>

namespace {

__attribute__((noinline)) void kernel_stand_in() {}

double ms_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
}

int run(const char* op) {
  if (std::strcmp(op, "malloc") == 0) {
    void* p = nullptr;
    std::printf("%d\n", static_cast<int>(cudaMalloc(&p, 1 << 20)));
  } else if (std::strcmp(op, "mallochost") == 0) {
    void* p = nullptr;
    std::printf("%d\n", static_cast<int>(cudaMallocHost(&p, 1 << 20)));
  } else if (std::strcmp(op, "sync") == 0) {
    const auto start = std::chrono::steady_clock::now();
    const cudaError_t e = cudaDeviceSynchronize();
    std::printf("%d %.1f\n", static_cast<int>(e), ms_since(start));
  } else if (std::strcmp(op, "streamsync") == 0) {
    std::printf("%d\n", static_cast<int>(cudaStreamSynchronize(nullptr)));
  } else if (std::strcmp(op, "streamquery") == 0) {
    std::printf("%d\n", static_cast<int>(cudaStreamQuery(nullptr)));
  } else if (std::strcmp(op, "launch") == 0) {
    std::printf("%d\n", static_cast<int>(cudaLaunchKernel(reinterpret_cast<const void*>(&kernel_stand_in), dim3(1),
                                                          dim3(1), nullptr, 0, nullptr)));
  } else if (std::strcmp(op, "count") == 0) {
    int n = -1;
    std::printf("%d\n", static_cast<int>(cudaGetDeviceCount(&n)));
  } else if (std::strcmp(op, "lasterror") == 0) {
    std::printf("%d\n", static_cast<int>(cudaGetLastError()));
  } else if (std::strcmp(op, "dtoh") == 0) {
    unsigned char host[64] = {};
    const cudaError_t e = cudaMemcpy(host, reinterpret_cast<const void*>(0x1000), sizeof host, cudaMemcpyDeviceToHost);
    int bits = 0;
    for (unsigned char b : host) bits += std::popcount(b);
    std::printf("%d %d\n", static_cast<int>(e), bits);
  } else if (std::strcmp(op, "nccl") == 0) {
    std::printf("%d\n", static_cast<int>(ncclAllReduce(nullptr, nullptr, 0, ncclFloat, ncclSum, nullptr, nullptr)));
  } else if (std::strcmp(op, "ncclasync") == 0) {
    ncclResult_t async = ncclSuccess;
    const ncclResult_t e = ncclCommGetAsyncError(nullptr, &async);
    std::printf("%d %d\n", static_cast<int>(e), static_cast<int>(async));
  } else if (std::strcmp(op, "bench") == 0) {
    constexpr int kCalls = 1000000;
    int n = 0;
    cudaError_t e = cudaGetDeviceCount(&n);  // the runtime's one-time initialisation
    const auto start = std::chrono::steady_clock::now();
    for (int i = 0; i < kCalls; ++i) e = cudaGetDeviceCount(&n);
    std::printf("%d %.1f\n", static_cast<int>(e), ms_since(start) * 1e6 / kCalls);
  } else {
    std::fprintf(stderr, "cuda_probe: unknown call %s\n", op);
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
