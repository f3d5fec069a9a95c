// A metric's better-direction (common/metrics/better.h): the words results.json has always held,
// and a word this version does not know read, judged and written back as before the
// direction was a type (not gated, a fall counted as worse, only "none" left out of the
// console's comparisons).
#include <catch2/catch.hpp>

#include <nlohmann/json.hpp>
#include <string>

#include "common/metrics/better.h"
#include "common/metrics/metric_catalogue.h"
#include "reports/gate/gate_selection.h"
#include "reports/model/json_io.h"

namespace better_direction_test {  // this file's names, apart in a unity batch (tests/CMakeLists.txt)

using chaosbench::common::Better;
using chaosbench::common::parse_better;
using chaosbench::common::to_string;
using chaosbench::common::worse_sign;

TEST_CASE("better: the words round-trip and anything else is unknown", "[better]") {
  CHECK(to_string(Better::kHigher) == "higher");
  CHECK(to_string(Better::kLower) == "lower");
  CHECK(to_string(Better::kNone) == "none");
  CHECK(to_string(Better::kUnknown).empty());
  for (Better b : {Better::kHigher, Better::kLower, Better::kNone, Better::kUnknown})
    CHECK(parse_better(to_string(b)) == b);
  CHECK(parse_better("sideways") == Better::kUnknown);
  CHECK(parse_better("Lower") == Better::kUnknown);
  CHECK(worse_sign(Better::kLower) == 1.0);
  for (Better b : {Better::kHigher, Better::kNone, Better::kUnknown}) CHECK(worse_sign(b) == -1.0);
  for (const auto& m : chaosbench::common::metric_catalogue()) CHECK(m.better != Better::kUnknown);
}

TEST_CASE("better: an unknown word in a results.json is read as unknown and never gated", "[better]") {
  using nlohmann::json;
  json file = {{"schema_version", 1}, {"verdict", "pass"}};
  const auto record = [](const char* name, json better) {
    json m = {{"name", name}, {"unit", "ms"}, {"labels", {{"phase", "overall"}}}, {"value", 1.0}};
    if (!better.is_null()) m["better"] = better;
    return m;
  };
  file["metrics"] = {record("a", "lower"), record("b", "higher"), record("c", "none"), record("d", "sideways"),
                     record("e", nullptr), record("f", 3)};
  const auto run = chaosbench::reports::from_json(file.dump());
  REQUIRE(run.metrics.size() == 6);
  CHECK(run.metrics[0].better == Better::kLower);
  CHECK(run.metrics[1].better == Better::kHigher);
  CHECK(run.metrics[2].better == Better::kNone);
  for (std::size_t i = 3; i < 6; ++i) {
    CHECK(run.metrics[i].better == Better::kUnknown);
    CHECK_FALSE(chaosbench::reports::gated(run.metrics[i]));
    CHECK_FALSE(chaosbench::reports::latency_like(run.metrics[i]));
  }
  CHECK(chaosbench::reports::gated(run.metrics[0]));
  CHECK(chaosbench::reports::latency_like(run.metrics[0]));
  CHECK(chaosbench::reports::gated(run.metrics[1]));
  CHECK_FALSE(chaosbench::reports::gated(run.metrics[2]));

  // Written back: the known words as they were; an unknown one as "" (the word a record
  // without one has always been written with).
  const auto out = json::parse(chaosbench::reports::to_json(run));
  const std::vector<std::string> words{"lower", "higher", "none", "", "", ""};
  for (std::size_t i = 0; i < words.size(); ++i) CHECK(out["metrics"][i]["better"] == words[i]);
}

}  // namespace better_direction_test
