// The requests `run --grafana` sends, against Grafana's annotations API
// (POST /api/annotations, PATCH /api/annotations/:id). The whole path through a run, to
// a local sink, is tests/e2e/grafana_annotations_test.sh.
#include <catch2/catch.hpp>

#include <nlohmann/json.hpp>

#include "harness/grafana/annotation_request.h"

namespace grafana_annotation_test {  // this file's names, apart in a unity batch (tests/CMakeLists.txt)

namespace grafana = chaosbench::harness::grafana;

namespace {

grafana::FaultAnnotation example() {
  grafana::FaultAnnotation a;
  a.fault = "slow-link";
  a.type = "network.delay";
  a.targets = {"node3", "node1"};
  a.occurrence = 2;
  a.run_id = "20250101T000000Z-abcd";
  a.scenario = "demo";
  a.start_ms = 1700000000123;
  a.end_ms = 1700000003456;
  return a;
}

}  // namespace

TEST_CASE("grafana: URLs under a root or a sub-path", "[grafana]") {
  CHECK(grafana::annotations_url("http://grafana:3000") == "http://grafana:3000/api/annotations");
  CHECK(grafana::annotations_url("https://h/grafana/") == "https://h/grafana/api/annotations");
  CHECK(grafana::annotation_url("http://g:3000/", 42) == "http://g:3000/api/annotations/42");
}

TEST_CASE("grafana: a region's create and end bodies", "[grafana]") {
  const auto a = example();
  auto j = nlohmann::json::parse(grafana::create_body(a, ""));
  CHECK(j.at("time") == 1700000000123);
  CHECK(j.at("timeEnd") == 1700000003456);
  CHECK(j.at("tags") == nlohmann::json{"chaosbench", "network.delay", "node3", "node1", "20250101T000000Z-abcd"});
  const std::string text = j.at("text");
  CHECK(text.find("slow-link") != std::string::npos);
  CHECK(text.find("#2") != std::string::npos);
  CHECK(text.find("demo") != std::string::npos);
  CHECK_FALSE(j.contains("dashboardUID"));
  CHECK(nlohmann::json::parse(grafana::create_body(a, "abc123")).at("dashboardUID") == "abc123");
  auto end = nlohmann::json::parse(grafana::end_body(a));
  CHECK(end == nlohmann::json{{"time", 1700000000123}, {"timeEnd", 1700000003456}});
}

TEST_CASE("grafana: the id of a create's answer", "[grafana]") {
  CHECK(grafana::created_id(R"({"message":"Annotation added","id":17})") == 17);
  CHECK_FALSE(grafana::created_id(R"({"message":"Annotation added"})"));
  CHECK_FALSE(grafana::created_id(R"({"id":"17"})"));
  CHECK_FALSE(grafana::created_id("<html>bad gateway</html>"));
  CHECK_FALSE(grafana::created_id(std::string(100000, '[')));
}

TEST_CASE("a warning shows Grafana's URL without its credentials", "[grafana]") {
  CHECK(grafana::url_for_messages("http://admin:secret@grafana:3000/api/annotations") ==
        "http://***@grafana:3000/api/annotations");
  CHECK(grafana::url_for_messages("https://u@h/x@y") == "https://***@h/x@y");
  CHECK(grafana::url_for_messages("http://grafana:3000/a@b") == "http://grafana:3000/a@b");
  CHECK(grafana::url_for_messages("http://grafana:3000") == "http://grafana:3000");
}

}  // namespace grafana_annotation_test
