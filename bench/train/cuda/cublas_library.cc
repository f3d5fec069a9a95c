// Loads cuBLAS with dlopen (cublas_library.h). The handle is never closed: the library
// stays for the life of the process, as a linked one would.
#include "bench/train/cuda/cublas_library.h"

#include <cuda_runtime_api.h>
#include <dlfcn.h>

#include <stdexcept>
#include <string>
#include <vector>

#ifndef CHAOSBENCH_CUDA_LIBRARY_DIR
#define CHAOSBENCH_CUDA_LIBRARY_DIR "/usr/local/cuda/lib64"
#endif

namespace chaosbench::bench::train::cuda {
namespace {

struct Loaded {
  CublasLibrary library;
  std::string error;  // empty when loaded
};

// Where libcudart was loaded from, so that cuBLAS comes from the same toolkit.
std::string cudart_directory() {
  Dl_info info{};
  if (dladdr(reinterpret_cast<void*>(&cudaGetDeviceCount), &info) == 0 || info.dli_fname == nullptr) return "";
  const std::string path = info.dli_fname;
  const auto slash = path.rfind('/');
  return slash == std::string::npos ? "" : path.substr(0, slash);
}

template <typename F>
bool resolve(void* handle, const char* name, F& out, std::string& error) {
  out = reinterpret_cast<F>(dlsym(handle, name));
  if (out == nullptr) error = std::string("no symbol ") + name + " in cuBLAS";
  return out != nullptr;
}

Loaded load() {
  Loaded loaded;
  const std::string soname = "libcublas.so." + std::to_string(CUBLAS_VER_MAJOR);
  std::vector<std::string> candidates{soname};
  if (const std::string dir = cudart_directory(); !dir.empty()) candidates.push_back(dir + "/" + soname);
  candidates.push_back(std::string(CHAOSBENCH_CUDA_LIBRARY_DIR) + "/" + soname);
  void* handle = nullptr;
  std::string tried;
  for (const auto& c : candidates) {
    handle = dlopen(c.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (handle != nullptr) break;
    const char* why = dlerror();
    tried += (tried.empty() ? "" : "; ") + (why != nullptr ? std::string(why) : c);
  }
  if (handle == nullptr) {
    loaded.error = "cannot load cuBLAS (" + tried + ")";
    return loaded;
  }
  auto& l = loaded.library;
  std::string& e = loaded.error;
  resolve(handle, "cublasCreate_v2", l.create, e) && resolve(handle, "cublasDestroy_v2", l.destroy, e) &&
      resolve(handle, "cublasSetStream_v2", l.set_stream, e) &&
      resolve(handle, "cublasSetMathMode", l.set_math_mode, e) && resolve(handle, "cublasSgemm_v2", l.sgemm, e) &&
      resolve(handle, "cublasGetVersion_v2", l.get_version, e) &&
      resolve(handle, "cublasGetStatusName", l.status_name, e) &&
      resolve(handle, "cublasGetStatusString", l.status_string, e);
  return loaded;
}

}  // namespace

const CublasLibrary& cublas_library() {
  static const Loaded loaded = load();
  if (!loaded.error.empty()) throw std::runtime_error(loaded.error);
  return loaded.library;
}

}  // namespace chaosbench::bench::train::cuda
