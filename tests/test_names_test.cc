// Test names that ctest can register whole: catch_discover_tests passes each name through
// a CMake list, which splits on ';', and a cut name would match no test case.
#include <catch2/catch.hpp>

#include <string>

namespace test_names_test {  // this file's names, apart in a unity batch (tests/CMakeLists.txt)

TEST_CASE("test names: no test case name contains a semicolon", "[hardening]") {
  const Catch::IConfig& config = *Catch::getCurrentContext().getConfig();
  const auto& all = Catch::getAllTestCasesSorted(config);
  CHECK(all.size() > 300);
  for (const auto& t : all) {
    INFO(t.name);
    CHECK(t.name.find(';') == std::string::npos);
  }
}

}  // namespace test_names_test
