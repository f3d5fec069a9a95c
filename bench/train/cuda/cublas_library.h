// cuBLAS, opened with dlopen on first use instead of linked: loading libcublas (and the
// libcublasLt it pulls in) runs about 65 ms of initialisers in every process that links
// it, which every process that loads the CUDA layer's module would pay, though only a
// CUDA device calls cuBLAS. The module links libcudart and libnccl: they load in about
// 1 ms. The entry points are those of cublas_v2.h, typed from its declarations,
// so a mismatch is a compile error.
// Search order: the dynamic linker's (the binary's RUNPATH, LD_LIBRARY_PATH, ld.so.cache),
// then the directory libcudart was loaded from, then the toolkit's library directory at
// build time (CHAOSBENCH_CUDA_LIBRARY_DIR). The soname's major version is the headers'.
// Threads: cublas_library() may be called from any thread; it loads once.
#pragma once

#include <cublas_v2.h>

namespace chaosbench::bench::train::cuda {

struct CublasLibrary {
  decltype(&cublasCreate_v2) create = nullptr;
  decltype(&cublasDestroy_v2) destroy = nullptr;
  decltype(&cublasSetStream_v2) set_stream = nullptr;
  decltype(&cublasSetMathMode) set_math_mode = nullptr;
  decltype(&cublasSgemm_v2) sgemm = nullptr;
  decltype(&cublasGetVersion_v2) get_version = nullptr;
  decltype(&cublasGetStatusName) status_name = nullptr;
  decltype(&cublasGetStatusString) status_string = nullptr;
};

// The loaded library. Throws std::runtime_error (with every place tried and dlerror's
// text) when it cannot be loaded, on this call and every later one.
const CublasLibrary& cublas_library();

}  // namespace chaosbench::bench::train::cuda
