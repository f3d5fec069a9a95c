#include "bench/micro/micro_benchmark.h"

#include <exception>
#include <utility>

namespace chaosbench::bench::micro {

std::function<void(benchmark::State&)> guarded(std::function<void(benchmark::State&)> body) {
  return [body = std::move(body)](benchmark::State& state) {
    try {
      body(state);
    } catch (const std::exception& e) {
      state.SkipWithError(e.what());
    } catch (...) {
      state.SkipWithError("unknown exception");
    }
  };
}

}  // namespace chaosbench::bench::micro
