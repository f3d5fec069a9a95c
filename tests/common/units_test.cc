#include <catch2/catch.hpp>

#include "common/values/units.h"

namespace units_test {  // this file's names, apart in a unity batch (tests/CMakeLists.txt)

using namespace chaosbench::common;
using namespace std::chrono_literals;

TEST_CASE("units: durations parse into nanoseconds", "[units]") {
  CHECK(parse_duration("250us")->value == 250us);
  CHECK(parse_duration("1.5s")->value == 1500ms);
  CHECK(parse_duration("2m")->value == 120s);
  CHECK(parse_duration("20ms")->value == 20ms);
  CHECK(parse_duration("0s")->value == 0s);
}

TEST_CASE("units: malformed durations are clear errors", "[units]") {
  auto spaced = parse_duration("20 ms");
  REQUIRE_FALSE(spaced);
  CHECK_THAT(spaced.error, Catch::Contains("no spaces"));
  auto bare = parse_duration("20");
  REQUIRE_FALSE(bare);
  CHECK_THAT(bare.error, Catch::Contains("unit is missing"));
  auto negative = parse_duration("-1s");
  REQUIRE_FALSE(negative);
  CHECK_THAT(negative.error, Catch::Contains("negative"));
  auto unknown = parse_duration("3 fortnights");
  REQUIRE_FALSE(unknown);
  auto wrong_unit = parse_duration("3d");
  REQUIRE_FALSE(wrong_unit);
  CHECK_THAT(wrong_unit.error, Catch::Contains("unknown unit \"d\""));
  CHECK_FALSE(parse_duration(""));
  CHECK_FALSE(parse_duration("1e3ms"));
  CHECK_FALSE(parse_duration(".s"));
}

TEST_CASE("units: rates, sizes and percentages", "[units]") {
  CHECK(parse_rate("100mbit")->bits_per_second == 100'000'000u);
  CHECK(parse_rate("1gbit")->bits_per_second == 1'000'000'000u);
  CHECK(parse_rate("1mbps")->bits_per_second == 8'000'000u);
  CHECK(parse_size("64KiB")->bytes == 65536u);
  CHECK(parse_size("1MB")->bytes == 1'000'000u);
  CHECK(parse_size("16MiB")->bytes == 16u << 20);
  CHECK(parse_percent("0.5%")->value == Approx(0.5));
  CHECK_FALSE(parse_percent("101%"));
  CHECK_FALSE(parse_percent("0.5"));
  CHECK_FALSE(parse_size("64kib"));
}

TEST_CASE("units: canonical spellings round-trip", "[units]") {
  CHECK(to_string(*parse_duration("1.5s")) == "1.5s");
  CHECK(to_string(*parse_duration("250us")) == "250us");
  CHECK(to_string(*parse_duration("2m")) == "2m");
  CHECK(to_string(*parse_rate("100mbit")) == "100mbit");
  CHECK(to_string(*parse_size("64KiB")) == "64KiB");
  CHECK(to_string(*parse_percent("0.5%")) == "0.5%");
}

}  // namespace units_test
