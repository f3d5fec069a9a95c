// Scraped families into the run's samples (counters to rates, resets, histograms to
// means and quantiles, filters by name and regex, rename, the series bound), the
// `scrape` section of a scenario, and a scraper thread against a local HTTP endpoint.
#include <catch2/catch.hpp>

#include <algorithm>
#include <map>
#include <mutex>
#include <thread>

#include "harness/exposition/bucket_quantile.h"
#include "harness/exposition/exposition_parser.h"
#include "harness/prometheus/scrape_converter.h"
#include "harness/prometheus/scraper.h"
#include "harness/scenario/diagnostic.h"
#include "harness/scenario/scenario_loader.h"

namespace scrape_test {  // this file's names, apart in a unity batch (tests/CMakeLists.txt)

using namespace chaosbench::harness;
using namespace chaosbench::harness::prometheus;

namespace {

std::vector<chaosbench::bench::Sample> convert(ScrapeConverter& c, const std::string& text, double t) {
  return c.convert(parse_exposition(text, ExpositionFormat::kPrometheusText), t).samples;
}

// name{label=value,...} -> value, with instance left out.
std::map<std::string, double> by_name(const std::vector<chaosbench::bench::Sample>& samples) {
  std::map<std::string, double> out;
  for (const auto& s : samples) {
    std::string key = s.name;
    for (const auto& [k, v] : s.labels)
      if (k != "instance") key += "," + k + "=" + chaosbench::bench::label_to_string(v);
    out[key] = s.value;
  }
  return out;
}

std::string scrape_error(const std::string& scrape) {
  const std::string text = R"({"schema_version": 1, "name": "t", "cluster": {"nodes": 2},
    "workload": {"kind": "collective"}, "scrape": )" + scrape + "}";
  try {
    parse_scenario(text, "s.json");
  } catch (const ScenarioError& e) {
    return format_diagnostic(e.diagnostics().front());
  }
  return "(valid)";
}

}  // namespace

TEST_CASE("scrape: gauges as values, counters as rates from the second scrape, resets skipped", "[scrape]") {
  ScrapeSpec spec;
  ScrapeConverter c(spec, "127.0.0.1:9100");
  auto first = by_name(convert(c, "# TYPE req_total counter\nreq_total{code=\"200\"} 100\ntemp 20\n", 1000.0));
  CHECK(first == std::map<std::string, double>{{"temp", 20}});  // no rate yet
  auto second = by_name(convert(c, "# TYPE req_total counter\nreq_total{code=\"200\"} 150\ntemp 21\n", 1002.0));
  CHECK(second.at("req_total:rate,code=200") == Approx(25));
  CHECK(second.at("temp") == 21);
  auto reset = by_name(convert(c, "# TYPE req_total counter\nreq_total{code=\"200\"} 10\n", 1003.0));
  CHECK(reset.count("req_total:rate,code=200") == 0);
  auto after = by_name(convert(c, "# TYPE req_total counter\nreq_total{code=\"200\"} 30\n", 1005.0));
  CHECK(after.at("req_total:rate,code=200") == Approx(10));
  // Every sample: rank -1, the scrape's time, the instance label; units from the name.
  auto samples = convert(c, "# TYPE up_seconds gauge\nup_seconds 5\n", 1006.0);
  REQUIRE(samples.size() == 1);
  CHECK(samples[0].rank == -1);
  CHECK(samples[0].time == 1006.0);
  CHECK(samples[0].unit == "s");
  CHECK(chaosbench::bench::label_to_string(samples[0].labels.at("instance")) == "127.0.0.1:9100");
}

TEST_CASE("scrape: OpenMetrics counters are named by their _total sample, like 0.0.4's", "[scrape]") {
  ScrapeSpec spec;
  ScrapeConverter c(spec, "i");
  auto om = [&](double v, double t) {
    return by_name(c.convert(parse_exposition("# TYPE req_bytes counter\n# UNIT req_bytes bytes\nreq_bytes_total " +
                                                  std::to_string(v) + "\nreq_bytes_created 5\n# EOF\n",
                                              ExpositionFormat::kOpenMetrics),
                             t)
                       .samples);
  };
  om(10, 1);
  auto second = om(30, 3);
  CHECK(second == std::map<std::string, double>{{"req_bytes_total:rate", 10}});
}

TEST_CASE("scrape: histograms give count and sum rates, the interval's mean and quantiles", "[scrape]") {
  ScrapeSpec spec;
  ScrapeConverter c(spec, "i");
  auto text = [](int b1, int b2, int inf, double sum) {
    return "# TYPE lat_seconds histogram\nlat_seconds_bucket{le=\"0.1\",path=\"/\"} " + std::to_string(b1) +
           "\nlat_seconds_bucket{le=\"0.2\",path=\"/\"} " + std::to_string(b2) + "\nlat_seconds_bucket{le=\"+Inf\",path=\"/\"} " +
           std::to_string(inf) + "\nlat_seconds_sum{path=\"/\"} " + std::to_string(sum) + "\nlat_seconds_count{path=\"/\"} " +
           std::to_string(inf) + "\n";
  };
  CHECK(convert(c, text(0, 0, 0, 0), 10).empty());
  auto s = by_name(convert(c, text(50, 100, 100, 12), 12));
  CHECK(s.at("lat_seconds_count:rate,path=/") == Approx(50));
  CHECK(s.at("lat_seconds_sum:rate,path=/") == Approx(6));
  CHECK(s.at("lat_seconds:mean,path=/") == Approx(0.12));
  CHECK(s.at("lat_seconds:p50,path=/") == Approx(0.1));
  CHECK(s.at("lat_seconds:p99,path=/") == Approx(0.198));
  CHECK(s.size() == 6);
  // No observations in the interval: rates of 0, no mean or quantile.
  auto idle = by_name(convert(c, text(50, 100, 100, 12), 13));
  CHECK(idle.at("lat_seconds_count:rate,path=/") == 0);
  CHECK(idle.count("lat_seconds:mean,path=/") == 0);
  CHECK(idle.count("lat_seconds:p99,path=/") == 0);
}

TEST_CASE("scrape: summaries keep their quantiles and get rates and a mean", "[scrape]") {
  ScrapeSpec spec;
  spec.rename = {{"rpc", "rpc/latency"}};
  ScrapeConverter c(spec, "i");
  const std::string head = "# TYPE rpc summary\nrpc{quantile=\"0.99\"} 0.3\nrpc{quantile=\"0.5\"} NaN\n";
  convert(c, head + "rpc_sum 10\nrpc_count 100\n", 0.5);
  auto s = by_name(convert(c, head + "rpc_sum 12\nrpc_count 110\n", 1.5));
  CHECK(s.at("rpc/latency,quantile=0.99") == Approx(0.3));
  CHECK(s.count("rpc/latency,quantile=0.5") == 0);  // NaN is left out
  CHECK(s.at("rpc/latency_count:rate") == Approx(10));
  CHECK(s.at("rpc/latency:mean") == Approx(0.2));
}

TEST_CASE("scrape: metrics by name or regex, rename, reserved labels, the series bound", "[scrape]") {
  ScrapeSpec spec;
  spec.metrics = {"node_load1", "/node_memory_.*_bytes/", "req_total"};
  spec.rename = {{"node_load1", "node/load1"}, {"req_total", "node/requests"}};
  ScrapeConverter c(spec, "i", 3);
  const std::string text =
      "node_load1{phase=\"x\",rank=\"7\"} 0.5\nnode_load5 0.7\nnode_memory_MemFree_bytes 10\n"
      "node_memory_Active_bytes 20\n# TYPE req_total counter\nreq_total 1\n";
  auto first = c.convert(parse_exposition(text, ExpositionFormat::kPrometheusText), 1);
  CHECK(first.dropped_series == 1);  // 4 series kept by the filter, the bound is 3
  auto s = by_name(first.samples);
  CHECK(s.at("node/load1,exported_phase=x,exported_rank=7") == 0.5);
  CHECK(s.count("node_load5") == 0);
  CHECK(s.at("node_memory_MemFree_bytes") == 10);
  ScrapeConverter wide(spec, "i");
  convert(wide, text, 1);
  auto rates = by_name(convert(wide, "# TYPE req_total counter\nreq_total 5\n", 3));
  CHECK(rates.at("node/requests") == Approx(2));
  // A regex never runs over a name past the bound (stack depth of std::regex).
  MetricFilter f({"/a+/"});
  CHECK(f.matches("aaa"));
  CHECK_FALSE(f.matches(std::string(MetricFilter::kMaxRegexSubject + 1, 'a')));
}

TEST_CASE("scrape: bucket quantiles as histogram_quantile computes them", "[scrape]") {
  const double inf = std::numeric_limits<double>::infinity();
  CHECK(*bucket_quantile(0.5, {{1, 10}, {2, 20}, {inf, 20}}) == Approx(1));
  CHECK(*bucket_quantile(0.75, {{inf, 20}, {2, 20}, {1, 10}}) == Approx(1.5));
  CHECK(*bucket_quantile(0.99, {{1, 0}, {inf, 5}}) == 1);  // in +Inf: the largest bound
  CHECK_FALSE(bucket_quantile(0.5, {{1, 0}, {inf, 0}}));
  CHECK_FALSE(bucket_quantile(0.5, {{1, 3}}));  // no +Inf bucket
  CHECK_FALSE(bucket_quantile(1.5, {{inf, 3}}));
}

TEST_CASE("scrape: NaN bucket bounds and counts are left out, not sorted", "[scrape]") {
  const double inf = std::numeric_limits<double>::infinity(), nan = std::numeric_limits<double>::quiet_NaN();
  CHECK(*bucket_quantile(0.5, {{1, 10}, {nan, 4}, {2, nan}, {inf, 20}}) == Approx(1));
  // A hostile target: many buckets with le="NaN" (more than std::sort's insertion run).
  ScrapeSpec spec;
  ScrapeConverter c(spec, "i");
  auto text = [](int n) {
    std::string t = "# TYPE h histogram\n";
    for (int i = 0; i < 40; ++i)
      t += "h_bucket{le=\"" + std::string(i % 2 ? "NaN" : std::to_string(i)) + "\"} " + std::to_string(n + i) + "\n";
    return t + "h_bucket{le=\"+Inf\"} " + std::to_string(n + 100) + "\nh_count " + std::to_string(n + 100) + "\n";
  };
  convert(c, text(0), 1);
  auto s = by_name(convert(c, text(10), 2));
  CHECK(s.count("h:p50") == 1);
}

TEST_CASE("scrape: the instance label is the URL's host and port", "[scrape]") {
  CHECK(instance_of("http://127.0.0.1:9100/metrics") == "127.0.0.1:9100");
  CHECK(instance_of("https://example.org/metrics") == "example.org:443");
  CHECK(instance_of("http://u:p@[::1]:8080") == "[::1]:8080");
  CHECK(instance_of("http://[::1]/x") == "[::1]:80");
}

TEST_CASE("scrape: the scenario's scrape section", "[scrape]") {
  CHECK(scrape_error(R"([{"url": "http://{node.1.addr}:9100/metrics", "every": "500ms", "timeout": "1s",
      "metrics": ["node_load1", "/node_cpu_.*/"], "rename": {"node_load1": "node/load1"}, "node": 1}])") == "(valid)");
  const std::string ok = R"("url": "http://127.0.0.1:1/m")";
  CHECK_THAT(scrape_error("{}"), Catch::Contains("scrape: expected an array"));
  CHECK_THAT(scrape_error(R"([{"url": "http://x", "evry": "1s"}])"),
             Catch::Contains("scrape[0].evry: unknown key (did you mean \"every\"?)"));
  CHECK_THAT(scrape_error(R"([{"every": "1s"}])"), Catch::Contains("missing required key \"url\""));
  CHECK_THAT(scrape_error(R"([{"url": "ftp://x"}])"), Catch::Contains("scrape[0].url: the URL must start with http://"));
  CHECK_THAT(scrape_error(R"([{"url": "http://{node.2.addr}/"}])"), Catch::Contains("the cluster has nodes 0 to 1"));
  CHECK_THAT(scrape_error(R"([{"url": "http://{rank}/"}])"), Catch::Contains("means nothing to a scrape"));
  CHECK_THAT(scrape_error("[{" + ok + R"(, "every": "50ms"}])"), Catch::Contains("scrape[0].every: a scrape runs at most every 100ms"));
  CHECK_THAT(scrape_error("[{" + ok + R"(, "metrics": ["/(/"]}])"), Catch::Contains("scrape[0].metrics[0]: the regex does not compile"));
  CHECK_THAT(scrape_error("[{" + ok + R"(, "metrics": ["a b"]}])"), Catch::Contains("neither a Prometheus metric name"));
  CHECK_THAT(scrape_error("[{" + ok + R"(, "rename": {"x": "bad name!"}}])"), Catch::Contains("scrape[0].rename.x: expected a metric name"));
  CHECK_THAT(scrape_error("[{" + ok + R"(, "rename": {"x-y": "a/b"}}])"), Catch::Contains("is not a Prometheus metric name"));
  CHECK_THAT(scrape_error("[{" + ok + R"(, "node": 2}])"), Catch::Contains("scrape[0].node: expected an integer from -1 to 1"));
}

TEST_CASE("scrape: a check may name a scraped Prometheus series", "[scrape]") {
  const std::string text = R"({"schema_version": 1, "name": "t", "cluster": {"nodes": 2},
    "workload": {"kind": "collective"}, "checks": [{"metric": "req_total:rate", "min": 1},
    {"metric": "node/load1", "max": 4}]})";
  auto r = parse_scenario(text, "s.json");
  CHECK(r.scenario.checks.size() == 2);
  CHECK(r.warnings.size() == 1);  // node/load1 is not in the catalogue; req_total:rate is plainly scraped
}

}  // namespace scrape_test
