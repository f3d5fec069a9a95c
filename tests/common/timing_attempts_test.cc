// The timing-attempts helper: it stops at the first attempt whose brackets held, and a
// bracket's miss is written with its figures. (Its failure after every attempt missed is
// a Catch2 FAIL, seen in the tests that use it.)
#include <catch2/catch.hpp>

#include "timing_attempts.h"

namespace timing_attempts_test {  // this file's names, apart in a unity batch (tests/CMakeLists.txt)

using namespace chaosbench::test;

TEST_CASE("timing attempts: measured again after a miss, and no more once the brackets hold", "[test-util]") {
  int calls = 0;
  within_timing_attempts(3, [&](int attempt) {
    ++calls;
    CHECK(attempt == calls);
    TimingMisses m;
    bracket(m, attempt >= 2, "TTFT p50 ms", 158.25, "150 +/- 2");
    return m;
  });
  CHECK(calls == 2);
  TimingMisses m;
  CHECK_FALSE(bracket(m, false, "TTFT p50 ms", 158.25, "150 +/- 2"));
  CHECK(bracket(m, true, "ITL p50 ms", 20, "20 +/- 1"));
  REQUIRE(m.size() == 1);
  CHECK(m[0] == "TTFT p50 ms 158.250, expected 150 +/- 2");
}

}  // namespace timing_attempts_test
