// The CUDA layer as a module beside the binary (bench/train/cuda_workers.h,
// common/files/install_layout.h), on any machine: where the binary looks for what it loads, and
// that the factory either loads the layer or says why, in the same words wherever a GPU is
// asked for. The GPU itself is tests/bench/cuda_device_test.cc's.
#include <catch2/catch.hpp>

#include <filesystem>
#include <stdexcept>
#include <string>

#include "bench/train/device_factory.h"
#include "common/files/install_layout.h"

namespace cuda_layer_test {  // this file's names, apart in a unity batch (tests/CMakeLists.txt)

using namespace chaosbench;
using bench::train::cuda_layer_status;

TEST_CASE("install layout: what the binary loads is in ../lib beside it", "[cuda-layer]") {
  CHECK(common::library_beside("/usr/bin/chaosbench", "libx.so") == "/usr/lib/libx.so");
  CHECK(common::library_beside("/opt/cb/bin/../bin/chaosbench", "libx.so") == "/opt/cb/lib/libx.so");
  CHECK(common::library_beside(CHAOSBENCH_BUILD_DIR "/bin/chaosbench", "libchaosbench_cuda.so") ==
        std::filesystem::path(CHAOSBENCH_BUILD_DIR "/lib/libchaosbench_cuda.so").lexically_normal().string());
  const std::string self = common::self_executable();
  REQUIRE_FALSE(self.empty());
  CHECK(std::filesystem::equivalent(self, std::filesystem::path(CHAOSBENCH_BUILD_DIR) / "bin" / "chaosbench_bench_tests"));
}

TEST_CASE("CUDA layer: loaded from beside the binary, or every GPU request says why", "[cuda-layer]") {
  const auto status = cuda_layer_status();
  if (!bench::train::cuda_built()) {
    CHECK(status.path.empty());
    CHECK(status.error == bench::train::kNoCudaMessage);
  } else {
    CHECK(status.path == common::library_beside(common::self_executable(), "libchaosbench_cuda_workers.so"));
    CHECK(std::filesystem::is_regular_file(status.path));
    if (status.error.empty()) return;  // it loads: cuda_device_test.cc takes it from here
    CHECK_THAT(status.error, Catch::Contains("does not load"));
  }
  std::string why;
  CHECK(bench::train::cuda_device_count(&why) == 0);
  CHECK(why == status.error);
  CHECK_THROWS_WITH(bench::train::make_device("cuda", 1), status.error);
}

}  // namespace cuda_layer_test
