// Another interposer, for the test that libchaosbench_cuda.so's dlsym override keeps
// dlsym(RTLD_NEXT) relative to its real caller: this library wraps cudaGetDeviceCount and
// finds the next definition with dlsym(RTLD_NEXT). Preloaded after libchaosbench_cuda.so,
// "next" must be the CUDA runtime's; if the override made the lookup relative to itself,
// the next definition after it would be this one, and the call would recurse forever.
#include <cstdio>

#include <cuda_runtime_api.h>
#include <dlfcn.h>

extern "C" __attribute__((visibility("default"))) cudaError_t cudaGetDeviceCount(int* count) {
  using Fn = cudaError_t (*)(int*);
  static const Fn next = reinterpret_cast<Fn>(dlsym(RTLD_NEXT, "cudaGetDeviceCount"));
  if (next == nullptr || next == &cudaGetDeviceCount) {
    std::fprintf(stderr, "rtld_next_wrapper: dlsym(RTLD_NEXT) found %s\n", next ? "this library" : "nothing");
    return cudaErrorUnknown;
  }
  std::fprintf(stderr, "rtld_next_wrapper: called the next cudaGetDeviceCount\n");
  return next(count);
}
