// The Prometheus 0.0.4 / OpenMetrics 1.0 text parser: real exporters' shapes, every type
// and suffix, escapes and UTF-8, numbers and timestamps, exemplars, and hostile input,
// which must end in an ExpositionError at the right line:column, never a crash.
#include <catch2/catch.hpp>

#include <cmath>
#include <string>

#include "harness/exposition/exposition_parser.h"

namespace exposition_parser_test {  // this file's names, apart in a unity batch (tests/CMakeLists.txt)

using namespace chaosbench::harness::prometheus;

namespace {

constexpr auto kText = ExpositionFormat::kPrometheusText;
constexpr auto kOm = ExpositionFormat::kOpenMetrics;

const MetricFamily& family(const std::vector<MetricFamily>& fs, const std::string& name) {
  for (const auto& f : fs)
    if (f.name == name) return f;
  FAIL("no family " << name);
  throw std::logic_error("unreachable");
}

// The error's "line:column: message", for one bad input.
std::string error_of(std::string_view text, ExpositionFormat format = kText, const ParseLimits& limits = {}) {
  try {
    parse_exposition(text, format, limits);
  } catch (const ExpositionError& e) {
    return e.what();
  }
  return "no error";
}

}  // namespace

TEST_CASE("exposition: node-exporter's 0.0.4 text", "[scrape]") {
  const std::string text =
      "# HELP node_cpu_seconds_total Seconds the CPUs spent in each mode.\n"
      "# TYPE node_cpu_seconds_total counter\n"
      "node_cpu_seconds_total{cpu=\"0\",mode=\"idle\"} 12345.67\n"
      "node_cpu_seconds_total{cpu=\"0\",mode=\"user\"} 89.1\n"
      "# HELP node_load1 1m load average.\n"
      "# TYPE node_load1 gauge\n"
      "node_load1 0.52\n"
      "# HELP node_memory_MemAvailable_bytes Memory information field MemAvailable_bytes.\n"
      "# TYPE node_memory_MemAvailable_bytes gauge\n"
      "node_memory_MemAvailable_bytes 8.123456e+09\n"
      "# HELP go_gc_duration_seconds A summary of the pause duration of garbage collection cycles.\n"
      "# TYPE go_gc_duration_seconds summary\n"
      "go_gc_duration_seconds{quantile=\"0\"} 2.1e-05\n"
      "go_gc_duration_seconds{quantile=\"1\"} 0.000112\n"
      "go_gc_duration_seconds_sum 0.0031\n"
      "go_gc_duration_seconds_count 42\n"
      "# HELP node_scrape_collector_success node_exporter: Whether a collector succeeded.\n"
      "# TYPE node_scrape_collector_success gauge\n"
      "node_scrape_collector_success{collector=\"cpu\"} 1\n";
  auto fs = parse_exposition(text, kText);
  REQUIRE(fs.size() == 5);
  const auto& cpu = family(fs, "node_cpu_seconds_total");
  CHECK(cpu.type == MetricType::kCounter);
  CHECK(cpu.help == "Seconds the CPUs spent in each mode.");
  REQUIRE(cpu.samples.size() == 2);
  CHECK(cpu.samples[0].labels == LabelPairs{{"cpu", "0"}, {"mode", "idle"}});
  CHECK(cpu.samples[0].value == Approx(12345.67));
  CHECK(family(fs, "node_memory_MemAvailable_bytes").samples[0].value == Approx(8.123456e9));
  const auto& gc = family(fs, "go_gc_duration_seconds");
  CHECK(gc.type == MetricType::kSummary);
  REQUIRE(gc.samples.size() == 4);
  CHECK(gc.samples[3].name == "go_gc_duration_seconds_count");
  CHECK(gc.samples[3].value == 42);
}

TEST_CASE("exposition: histograms, untyped samples, timestamps in milliseconds", "[scrape]") {
  const std::string text =
      "# TYPE rpc_duration_seconds histogram\n"
      "rpc_duration_seconds_bucket{le=\"0.05\"} 24054\n"
      "rpc_duration_seconds_bucket{le=\"0.1\"} 33444\n"
      "rpc_duration_seconds_bucket{le=\"+Inf\"} 144320\n"
      "rpc_duration_seconds_sum 53423\n"
      "rpc_duration_seconds_count 144320\n"
      "\n"
      "# A comment that is no HELP or TYPE\n"
      "metric_without_timestamp_and_labels 12.47\n"
      "http_requests_total{method=\"post\",code=\"200\"} 1027 1395066363000\n"
      "something_weird{problem=\"division by zero\"} +Inf -3982045\n";
  auto fs = parse_exposition(text, kText);
  REQUIRE(fs.size() == 4);
  const auto& h = family(fs, "rpc_duration_seconds");
  CHECK(h.type == MetricType::kHistogram);
  CHECK(h.samples.size() == 5);
  CHECK(family(fs, "metric_without_timestamp_and_labels").type == MetricType::kUnknown);
  const auto& req = family(fs, "http_requests_total").samples.at(0);
  REQUIRE(req.timestamp_s);
  CHECK(*req.timestamp_s == Approx(1395066363.0));
  const auto& weird = family(fs, "something_weird").samples.at(0);
  CHECK(std::isinf(weird.value));
  CHECK(*weird.timestamp_s == Approx(-3982.045));
}

TEST_CASE("exposition: OpenMetrics families, suffixes, units, exemplars and # EOF", "[scrape]") {
  const std::string text =
      "# TYPE acme_http_router_request_seconds summary\n"
      "# UNIT acme_http_router_request_seconds seconds\n"
      "# HELP acme_http_router_request_seconds Latency though all of ACME's HTTP request router.\n"
      "acme_http_router_request_seconds_sum{path=\"/api/v1\",method=\"GET\"} 9036.32\n"
      "acme_http_router_request_seconds_count{path=\"/api/v1\",method=\"GET\"} 807283.0\n"
      "acme_http_router_request_seconds_created{path=\"/api/v1\",method=\"GET\"} 1605281325.0\n"
      "# TYPE foo counter\n"
      "foo_total 17.0 1520879607.789 # {trace_id=\"KOO5S4vxi0o\"} 0.67 1520879602.1\n"
      "foo_created 1520872607.123\n"
      "# TYPE hist histogram\n"
      "hist_bucket{le=\"0.01\"} 0 # {id=\"a\"} 0.005\n"
      "hist_bucket{le=\"+Inf\"} 3\n"
      "hist_count 3\n"
      "hist_sum 0.4\n"
      "# TYPE gh gaugehistogram\n"
      "gh_bucket{le=\"1\"} 2\n"
      "gh_bucket{le=\"+Inf\"} 4\n"
      "gh_gcount 4\n"
      "gh_gsum 7\n"
      "# TYPE build info\n"
      "build_info{version=\"1.2\"} 1\n"
      "# TYPE door stateset\n"
      "door{door=\"open\"} 1\n"
      "door{door=\"closed\"} 0\n"
      "# TYPE temp unknown\n"
      "temp 21.5\n"
      "# EOF\n";
  auto fs = parse_exposition(text, kOm);
  REQUIRE(fs.size() == 7);
  const auto& s = family(fs, "acme_http_router_request_seconds");
  CHECK(s.unit == "seconds");
  CHECK(s.samples.size() == 3);
  const auto& foo = family(fs, "foo");
  CHECK(foo.type == MetricType::kCounter);
  REQUIRE(foo.samples.size() == 2);
  CHECK(foo.samples[0].name == "foo_total");
  CHECK(*foo.samples[0].timestamp_s == Approx(1520879607.789));
  CHECK(family(fs, "hist").samples.size() == 4);
  CHECK(family(fs, "gh").type == MetricType::kGaugeHistogram);
  CHECK(family(fs, "gh").samples.size() == 4);
  CHECK(family(fs, "build").samples.at(0).name == "build_info");
  CHECK(family(fs, "door").type == MetricType::kStateSet);
  CHECK(family(fs, "temp").type == MetricType::kUnknown);
}

TEST_CASE("exposition: escapes, UTF-8 label values, quoted UTF-8 names, odd spacing", "[scrape]") {
  const std::string text =
      "# HELP esc A help with \\\\ and \\n in it.\n"
      "esc{path=\"C:\\\\dir\",quote=\"say \\\"hi\\\"\",nl=\"a\\nb\",utf=\"héllo → 世界 🙂\",} 1\n"
      "{\"my.dotted.metric\", \"läbel.name\"=\"v\"} 2\n"
      "spaced\t{ a = \"1\" , b=\"2\" }   3   \n"
      "crlf 4\r\n"
      "empty{} 5\n";
  auto fs = parse_exposition(text, kText);
  const auto& esc = family(fs, "esc");
  CHECK(esc.help == "A help with \\ and \n in it.");
  CHECK(esc.samples[0].labels ==
        LabelPairs{{"path", "C:\\dir"}, {"quote", "say \"hi\""}, {"nl", "a\nb"}, {"utf", "héllo → 世界 🙂"}});
  const auto& dotted = family(fs, "my.dotted.metric");
  CHECK(dotted.samples[0].labels == LabelPairs{{"läbel.name", "v"}});
  CHECK(family(fs, "spaced").samples[0].value == 3);
  CHECK(family(fs, "spaced").samples[0].labels.size() == 2);
  CHECK(family(fs, "crlf").samples[0].value == 4);
  CHECK(family(fs, "empty").samples[0].labels.empty());
}

TEST_CASE("exposition: numbers: NaN, infinities, exponents, signs", "[scrape]") {
  auto fs = parse_exposition("a NaN\nb +Inf\nc -Inf\nd 1e-3\ne -2.5E+2\nf .5\ng +7\nh inf\n", kText);
  REQUIRE(fs.size() == 8);
  CHECK(std::isnan(fs[0].samples[0].value));
  CHECK(fs[1].samples[0].value == std::numeric_limits<double>::infinity());
  CHECK(fs[2].samples[0].value == -std::numeric_limits<double>::infinity());
  CHECK(fs[3].samples[0].value == Approx(0.001));
  CHECK(fs[4].samples[0].value == Approx(-250));
  CHECK(fs[5].samples[0].value == Approx(0.5));
  CHECK(fs[6].samples[0].value == 7);
  CHECK(std::isinf(fs[7].samples[0].value));
  for (const char* bad : {"x 0x10\n", "x 1e400\n", "x ++1\n", "x 1.2.3\n", "x nan(1)\n", "x 12abc\n", "x -\n", "x infinit\n"})
    CHECK_THAT(error_of(bad), Catch::StartsWith("1:3: "));
}

TEST_CASE("exposition: malformed lines say where", "[scrape]") {
  CHECK(error_of("ok 1\nbad{a=\"1\" 2\n") == "2:11: expected \",\" or \"}\" after a label");
  CHECK_THAT(error_of("x{a=\"\\t\"} 1\n"), Catch::StartsWith("1:6: invalid escape"));
  CHECK_THAT(error_of("x{a=\"open} 1\n"), Catch::Contains("never closed"));
  CHECK_THAT(error_of("x{a=\"1\",a=\"2\"} 1\n"), Catch::Contains("label \"a\" appears twice"));
  CHECK_THAT(error_of("x{0a=\"1\"} 1\n"), Catch::StartsWith("1:3: expected a label name"));
  CHECK_THAT(error_of("x{a:b=\"1\"} 1\n"), Catch::Contains("is not a label name"));
  CHECK_THAT(error_of("x{a=1} 1\n"), Catch::Contains("expected the quoted value of label \"a\""));
  CHECK_THAT(error_of("x\n"), Catch::Contains("expected a value"));
  CHECK_THAT(error_of("x 1 2 3\n"), Catch::StartsWith("1:7: unexpected text after the timestamp"));
  CHECK_THAT(error_of("x 1 1.5\n"), Catch::Contains("integer milliseconds"));
  CHECK_THAT(error_of("x 1 # {a=\"1\"} 2\n", kOm), Catch::Contains("1:1"));  // no # EOF
  CHECK_THAT(error_of("x 1 # {a=\"1\"}\n# EOF\n", kOm), Catch::Contains("exemplar's value"));
  CHECK_THAT(error_of("x 1 #\n"), Catch::Contains("exemplar"));
  CHECK_THAT(error_of("9x 1\n"), Catch::StartsWith("1:1: expected a metric name"));
  CHECK_THAT(error_of("{} 1\n"), Catch::Contains("no metric name"));
}

TEST_CASE("exposition: metadata rules", "[scrape]") {
  CHECK_THAT(error_of("# TYPE x gauge\n# TYPE x gauge\n"), Catch::StartsWith("2:8: a second # TYPE line"));
  CHECK_THAT(error_of("# HELP x a\n# HELP x b\n"), Catch::Contains("second # HELP"));
  CHECK_THAT(error_of("x 1\n# TYPE x gauge\n"), Catch::Contains("after its samples"));
  CHECK_THAT(error_of("# TYPE x gaugehistogram\n"), Catch::Contains("unknown type \"gaugehistogram\""));
  CHECK_THAT(error_of("# TYPE x untyped\n# EOF\n", kOm), Catch::Contains("unknown type \"untyped\""));
  CHECK_THAT(error_of("# TYPE x_seconds gauge\n# UNIT x_seconds bytes\n# EOF\n", kOm), Catch::Contains("must end in its unit"));
  CHECK_THAT(error_of("# TYPE h histogram\nh_bucket 1\n"), Catch::Contains("no \"le\" label"));
  CHECK_THAT(error_of("# TYPE h histogram\nh_bucket{le=\"x\"} 1\n"), Catch::Contains("is not a number"));
  CHECK_THAT(error_of("# TYPE s summary\ns 1\n"), Catch::Contains("no \"quantile\" label"));
  CHECK_THAT(error_of("# TYPE h histogram\nh 1\n"), Catch::Contains("has no sample of that bare name"));
  CHECK_THAT(error_of("x 1\n# EOF\ny 2\n", kOm), Catch::StartsWith("3:1: text after \"# EOF\""));
  CHECK_THAT(error_of("x 1\n", kOm), Catch::Contains("must end with \"# EOF\""));
  // 0.0.4: # EOF and # UNIT are comments.
  CHECK(parse_exposition("# UNIT x seconds\n# EOF\nx 1\n", kText).size() == 1);
  CHECK(parse_exposition("", kText).empty());
  CHECK(parse_exposition("# EOF", kOm).empty());
}

TEST_CASE("exposition: hostile input ends in an error, bounded", "[scrape]") {
  ParseLimits small;
  small.max_bytes = 1000;
  small.max_line = 100;
  small.max_labels = 3;
  small.max_samples = 5;
  small.max_families = 2;
  CHECK_THAT(error_of(std::string(1001, 'x'), kText, small), Catch::Contains("at most 1000"));
  CHECK_THAT(error_of("x " + std::string(200, '1') + "\n", kText, small), Catch::Contains("longer than 100 bytes"));
  CHECK_THAT(error_of("x{a=\"1\",b=\"1\",c=\"1\",d=\"1\"} 1\n", kText, small), Catch::Contains("more than 3 labels"));
  CHECK_THAT(error_of("x 1\nx 1\nx 1\nx 1\nx 1\nx 1\n", kText, small), Catch::StartsWith("6:1: more than 5 samples"));
  CHECK_THAT(error_of("a 1\nb 1\nc 1\n", kText, small), Catch::Contains("more than 2 metric families"));
  CHECK_THAT(error_of(std::string("x{a=\"\0\"} 1\n", 12)), Catch::StartsWith("1:6: a NUL byte"));
  CHECK_THAT(error_of("x{a=\"\xff\"} 1\n"), Catch::StartsWith("1:6: a byte that is not UTF-8"));
  CHECK_THAT(error_of("x{a=\"\xc0\xaf\"} 1\n"), Catch::Contains("not UTF-8"));   // overlong
  CHECK_THAT(error_of("x{a=\"\xed\xa0\x80\"} 1\n"), Catch::Contains("not UTF-8"));  // a surrogate
  // A megabyte line of braces, quotes and backslashes: an error, quickly, no recursion.
  std::string wild;
  for (int i = 0; i < 200000; ++i) wild += "{\"\\";
  CHECK_THAT(error_of(wild), Catch::StartsWith("1:"));
  std::string many_labels = "x{";
  for (int i = 0; i < 100; ++i) many_labels += "l" + std::to_string(i) + "=\"v\",";
  CHECK_THAT(error_of(many_labels + "} 1\n"), Catch::Contains("more than 64 labels"));
  // Every prefix of a valid exposition either parses or fails cleanly.
  const std::string valid = "# TYPE h histogram\nh_bucket{le=\"+Inf\",a=\"x\\\"y\"} 3 # {t=\"1\"} 1 2\nh_sum 1\n# EOF\n";
  for (std::size_t n = 0; n <= valid.size(); ++n) {
    try {
      parse_exposition(valid.substr(0, n), kOm);
    } catch (const ExpositionError&) {
    }
  }
}

TEST_CASE("exposition: the format a Content-Type names", "[scrape]") {
  CHECK(format_of_content_type("application/openmetrics-text; version=1.0.0; charset=utf-8") == kOm);
  CHECK(format_of_content_type("Application/OpenMetrics-Text") == kOm);
  CHECK(format_of_content_type("text/plain; version=0.0.4; charset=utf-8") == kText);
  CHECK(format_of_content_type("") == kText);
}

}  // namespace exposition_parser_test
