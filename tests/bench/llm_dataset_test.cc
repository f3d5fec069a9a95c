// bench/llm/: the request datasets. Length distributions (statistics over many draws,
// determinism per seed, clamping), synthetic prompt text, and the JSONL prompt reader's
// shapes, bounds and line-numbered errors.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstdio>
#include <numeric>
#include <vector>

#include "bench/llm/load/length_sampler.h"
#include "bench/llm/load/prompt_file.h"
#include "bench/llm/load/token_dataset.h"

namespace llm_dataset_test {  // this file's names, apart in a unity batch (tests/CMakeLists.txt)

namespace llm = chaosbench::bench::llm;
using llm::LengthDistribution;

namespace {

struct Stats {
  double mean = 0, stddev = 0;
  std::int64_t min = 0, max = 0;
};

Stats draw(const llm::LengthSpec& spec, std::uint64_t seed, int n = 200'000) {
  llm::LengthSampler sampler(spec, seed);
  std::vector<double> xs(static_cast<std::size_t>(n));
  for (auto& x : xs) x = static_cast<double>(sampler.next());
  Stats s;
  s.mean = std::accumulate(xs.begin(), xs.end(), 0.0) / n;
  double ss = 0;
  for (double x : xs) ss += (x - s.mean) * (x - s.mean);
  s.stddev = std::sqrt(ss / (n - 1));
  s.min = static_cast<std::int64_t>(*std::min_element(xs.begin(), xs.end()));
  s.max = static_cast<std::int64_t>(*std::max_element(xs.begin(), xs.end()));
  return s;
}

llm::LengthSpec spec(LengthDistribution kind, double mean, double stddev, std::int64_t max = 1 << 20) {
  llm::LengthSpec s;
  s.kind = kind;
  s.mean = mean;
  s.stddev = stddev;
  s.max = max;
  return s;
}

}  // namespace

TEST_CASE("length distributions have their mean and spread", "[llm-timing]") {
  SECTION("fixed") {
    const auto s = draw(spec(LengthDistribution::kFixed, 128, 0), 1, 1000);
    CHECK(s.min == 128);
    CHECK(s.max == 128);
  }
  SECTION("uniform, both ends included") {
    llm::LengthSpec u;
    u.kind = LengthDistribution::kUniform;
    u.low = 10;
    u.high = 20;
    const auto s = draw(u, 2);
    CHECK(s.min == 10);
    CHECK(s.max == 20);
    CHECK(s.mean == Approx(15).epsilon(0.01));
    CHECK(s.stddev == Approx(std::sqrt((11.0 * 11.0 - 1) / 12)).epsilon(0.01));
  }
  SECTION("normal") {
    const auto s = draw(spec(LengthDistribution::kNormal, 512, 64), 3);
    CHECK(s.mean == Approx(512).epsilon(0.005));
    CHECK(s.stddev == Approx(64).epsilon(0.02));
  }
  SECTION("lognormal: mean and stddev are the lengths', not the logs'") {
    const auto s = draw(spec(LengthDistribution::kLognormal, 256, 128), 4);
    CHECK(s.mean == Approx(256).epsilon(0.01));
    CHECK(s.stddev == Approx(128).epsilon(0.03));
    CHECK(s.min >= 1);
  }
}

TEST_CASE("lengths are clamped to [1, max] and deterministic per seed", "[llm-timing]") {
  const auto wide = spec(LengthDistribution::kNormal, 10, 50, 30);
  const auto s = draw(wide, 5, 20'000);
  CHECK(s.min == 1);
  CHECK(s.max == 30);
  llm::LengthSampler a(spec(LengthDistribution::kLognormal, 100, 80), 42), b(spec(LengthDistribution::kLognormal, 100, 80), 42),
      c(spec(LengthDistribution::kLognormal, 100, 80), 43);
  std::vector<std::int64_t> xa, xb, xc;
  for (int i = 0; i < 1000; ++i) {
    xa.push_back(a.next());
    xb.push_back(b.next());
    xc.push_back(c.next());
  }
  CHECK(xa == xb);
  CHECK(xa != xc);
  // The first draws for seed 42 are fixed by mt19937_64 and the transforms written here,
  // not by a standard library's distributions (only libm's log, cos and sqrt remain).
  llm::LengthSampler fixed(spec(LengthDistribution::kNormal, 1000, 100), 42);
  CHECK(fixed.next() == 892);
  CHECK(fixed.next() == 1109);
  CHECK(fixed.next() == 1179);
}

TEST_CASE("invalid length specs are refused with a reason", "[llm-timing]") {
  CHECK(llm::validate(spec(LengthDistribution::kNormal, 100, 10)).empty());
  CHECK_FALSE(llm::validate(spec(LengthDistribution::kNormal, -1, 10)).empty());
  CHECK_FALSE(llm::validate(spec(LengthDistribution::kLognormal, 100, -1)).empty());
  CHECK_FALSE(llm::validate(spec(LengthDistribution::kFixed, 0, 0)).empty());
  CHECK_FALSE(llm::validate(spec(LengthDistribution::kFixed, 10, 0, 0)).empty());
  llm::LengthSpec u;
  u.kind = LengthDistribution::kUniform;
  u.low = 5;
  u.high = 4;
  CHECK_THROWS_AS(llm::LengthSampler(u, 1), std::invalid_argument);
}

TEST_CASE("synthetic prompts have exactly the drawn length in printable words", "[llm-timing]") {
  llm::LengthSpec in;
  in.kind = LengthDistribution::kUniform;
  in.low = 1;
  in.high = 300;
  llm::SyntheticDataset ds(in, spec(LengthDistribution::kFixed, 64, 0), 7), same(in, spec(LengthDistribution::kFixed, 64, 0), 7);
  for (int i = 0; i < 500; ++i) {
    const auto r = ds.next();
    CHECK(same.next().prompt == r.prompt);
    REQUIRE(static_cast<std::int64_t>(r.prompt.size()) == r.input_tokens);
    CHECK(r.max_tokens == 64);
    CHECK(r.prompt.front() != ' ');
    CHECK(r.prompt.back() != ' ');
    CHECK(r.prompt.find("  ") == std::string::npos);
    for (char ch : r.prompt) CHECK(((ch >= 'a' && ch <= 'z') || ch == ' '));
  }
  std::mt19937_64 rng(1);
  CHECK(llm::SyntheticDataset::prompt_text(0, rng).empty());
  CHECK(llm::SyntheticDataset::prompt_text(2, rng).size() == 2);
}

TEST_CASE("prompt JSONL: both shapes, defaults and clamps", "[llm-timing]") {
  llm::PromptFileOptions o;
  o.default_output_len = 50;
  o.max_output_len = 100;
  const auto f = llm::parse_prompt_jsonl(
      "{\"prompt\": \"hello there\", \"output_len\": 7}\n"
      "\n"
      "{\"prompt\": \"no length\"}\r\n"
      "{\"prompt\": \"too long an answer\", \"output_len\": 5000}\n"
      "{\"conversations\": [{\"from\": \"human\", \"value\": \"hi\"}, {\"from\": \"gpt\", \"value\": \"hello!\"}]}\n"
      "{\"conversations\": [{\"from\": \"user\", \"value\": \"alone\"}]}",
      o);
  REQUIRE(f.requests.size() == 5);
  CHECK(f.requests[0].prompt == "hello there");
  CHECK(f.requests[0].input_tokens == 11);
  CHECK(f.requests[0].max_tokens == 7);
  CHECK(f.requests[1].max_tokens == 50);
  CHECK(f.requests[2].max_tokens == 100);
  CHECK(f.requests[3].prompt == "hi");
  CHECK(f.requests[3].max_tokens == 6);
  CHECK(f.requests[4].max_tokens == 50);
}

TEST_CASE("prompt JSONL errors name their line, and bounds hold", "[llm-timing]") {
  const auto error_of = [](const std::string& text, const llm::PromptFileOptions& o = {}) {
    try {
      llm::parse_prompt_jsonl(text, o);
    } catch (const llm::PromptFileError& e) {
      return std::make_pair(e.line(), std::string(e.what()));
    }
    return std::make_pair(std::size_t{9999}, std::string());
  };
  const std::string good = "{\"prompt\": \"ok\"}\n";
  CHECK(error_of(good + "{bad json\n").first == 2);
  CHECK(error_of(good + good + "[1, 2]\n").first == 3);
  CHECK(error_of("{\"prompt\": 5}").second == "line 1: \"prompt\" must be a string");
  CHECK(error_of("{\"prompt\": \"\"}").second == "line 1: the prompt is empty");
  CHECK(error_of("{\"prompt\": \"x\", \"output_len\": 0}").first == 1);
  CHECK(error_of("{\"prompt\": \"x\", \"output_len\": 2.5}").first == 1);
  CHECK(error_of("{\"other\": 1}").second.find("exactly one of") != std::string::npos);
  CHECK(error_of("{\"prompt\": \"x\", \"conversations\": []}").first == 1);
  CHECK(error_of("{\"conversations\": [{\"from\": \"gpt\", \"value\": \"x\"}]}").first == 1);
  CHECK(error_of("{\"conversations\": [{\"from\": \"human\"}]}").first == 1);
  CHECK(error_of("{\"conversations\": {}}").first == 1);
  CHECK(error_of(std::string(100, '[') + std::string(100, ']')).first == 1);  // nesting bound

  llm::PromptFileOptions o;
  o.max_line_bytes = 20;
  CHECK(error_of(good + "{\"prompt\": \"a very long line indeed\"}", o).first == 2);
  o = {};
  o.max_records = 2;
  CHECK(error_of(good + good + good, o).second == "line 3: more than 2 records");
  o = {};
  o.max_file_bytes = 10;
  CHECK(error_of(good, o).first == 0);
  o = {};
  o.max_input_len = 3;
  CHECK(error_of("{\"prompt\": \"long\"}", o).first == 1);
  o.skip_oversize_prompts = true;
  const auto f = llm::parse_prompt_jsonl(good + "{\"prompt\": \"long\"}", o);
  CHECK(f.requests.size() == 1);
  CHECK(f.skipped_oversize == 1);
}

TEST_CASE("prompt JSONL from a file names the path", "[llm-timing]") {
  const std::string path = "/tmp/chaosbench_llm_prompts_test.jsonl";
  {
    std::FILE* f = std::fopen(path.c_str(), "w");
    REQUIRE(f);
    std::fputs("{\"prompt\": \"one\"}\n{\"prompt\": 1}\n", f);
    std::fclose(f);
  }
  try {
    llm::read_prompt_jsonl(path);
    FAIL("no error");
  } catch (const llm::PromptFileError& e) {
    CHECK(e.line() == 2);
    CHECK(std::string(e.what()) == path + ": line 2: \"prompt\" must be a string");
  }
  std::remove(path.c_str());
  try {
    llm::read_prompt_jsonl("/nonexistent/prompts.jsonl");
    FAIL("no error");
  } catch (const llm::PromptFileError& e) {
    CHECK(e.line() == 0);
    CHECK(std::string(e.what()).find("/nonexistent/prompts.jsonl") != std::string::npos);
  }
}

}  // namespace llm_dataset_test
