// Seeded fuzzing of the readers of files another run (or anyone) may have written:
// results.json (report, compare, --baseline) and checkpoints with their manifest. Each
// case must end in a value or a clear std::exception / rejection: no crash, no hang, and
// memory bounded. The seed is printed, so a failure can be replayed with
// CHAOSBENCH_FUZZ_SEED=<seed>.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <random>
#include <sys/resource.h>
#include <sys/stat.h>

#include <nlohmann/json.hpp>

#include "bench/checkpoint/checkpoint_loader.h"
#include "bench/checkpoint/checkpoint_writer.h"
#include "reports/gate/gate.h"
#include "reports/model/json_io.h"
#include "reports/render/report_set.h"
#include "tests/support/report_fixtures.h"
#include "tests/support/test_util.h"

namespace file_fuzz_test {  // this file's names, apart in a unity batch (tests/CMakeLists.txt)

using namespace chaosbench;
using nlohmann::json;

namespace {

std::uint64_t fuzz_seed() {
  const char* s = std::getenv("CHAOSBENCH_FUZZ_SEED");
  return s ? std::strtoull(s, nullptr, 10) : 20261201;
}

long max_rss_mib() {
  rusage u{};
  ::getrusage(RUSAGE_SELF, &u);
  return u.ru_maxrss / 1024;
}

// A JSON value of a random type, sometimes absurd (huge, negative, deep, long).
json random_value(std::mt19937_64& rng) {
  switch (rng() % 10) {
    case 0: return nullptr;
    case 1: return static_cast<std::int64_t>(rng());
    case 2: return -1;
    case 3: return 1e308;
    case 4: return std::string(rng() % 5000, 'x');
    case 5: return json::array({1, "two", nullptr});
    case 6: return json::object({{"x", 1}});
    case 7: return std::numeric_limits<std::uint64_t>::max();
    case 8: return true;
    default: return "\xff\xfe not utf-8";
  }
}

// Replaces one value somewhere in `j` (walking down a random path) by a random one.
void mutate_json(json& j, std::mt19937_64& rng) {
  json* node = &j;
  for (int depth = 0; depth < 6; ++depth) {
    if (node->is_object() && !node->empty()) {
      auto it = node->begin();
      std::advance(it, static_cast<long>(rng() % node->size()));
      if (rng() % 3 == 0) {
        *it = random_value(rng);
        return;
      }
      node = &*it;
    } else if (node->is_array() && !node->empty()) {
      node = &(*node)[rng() % node->size()];
    } else {
      break;
    }
  }
  *node = random_value(rng);
}

// Byte-level damage: flips, truncation, a splice of brackets, a run of digits.
std::string mutate_bytes(std::string s, std::mt19937_64& rng) {
  if (s.empty()) return s;
  switch (rng() % 5) {
    case 0:
      for (int i = 0; i < 8; ++i) s[rng() % s.size()] = static_cast<char>(rng());
      return s;
    case 1: return s.substr(0, rng() % s.size());
    case 2: return s.insert(rng() % s.size(), std::string(1 + rng() % 100000, '['));
    case 3: return s.insert(rng() % s.size(), std::string(1 + rng() % 400, '9'));
    default: return std::string(rng() % 2000, static_cast<char>(rng()));
  }
}

void write_bytes(const std::string& path, const std::string& bytes) {
  std::ofstream(path, std::ios::binary | std::ios::trunc) << bytes;
}

}  // namespace

TEST_CASE("fuzz: 2,000 malformed results files are read, compared and reported without a crash", "[hardening][slow]") {
  const std::uint64_t seed = fuzz_seed();
  WARN("results fuzz seed " << seed << " (CHAOSBENCH_FUZZ_SEED)");
  std::mt19937_64 rng(seed);
  const reports::RunResult golden = test::golden_run();
  const json valid = json::parse(reports::to_json(golden));
  const long rss_before = max_rss_mib();
  int parsed = 0, refused = 0;
  for (int i = 0; i < 2000; ++i) {
    std::string text;
    if (i % 2 == 0) {
      json j = valid;
      for (int m = 0; m < 1 + static_cast<int>(rng() % 3); ++m) mutate_json(j, rng);
      text = j.dump(-1, ' ', false, json::error_handler_t::replace);
    } else {
      text = mutate_bytes(valid.dump(), rng);
    }
    INFO("case " << i);
    try {
      const reports::RunResult r = reports::from_json(text);
      ++parsed;
      // What `report` and `compare` do with what they read.
      (void)reports::compare_runs(golden, r);
      (void)reports::compare_runs(r, r);
      if (i % 10 == 0) {
        for (auto f : {reports::ReportFormat::kMarkdown, reports::ReportFormat::kJunit, reports::ReportFormat::kHtml,
                       reports::ReportFormat::kTrace, reports::ReportFormat::kJson})
          (void)reports::render_report(f, r, "/nonexistent");
      }
    } catch (const std::exception& e) {
      ++refused;
      CHECK(std::string(e.what()).size() < 2000);  // a message, not an echo of the input
    }
  }
  WARN(parsed << " parsed and reported, " << refused << " refused with an error");
  CHECK(parsed + refused == 2000);
  CHECK(max_rss_mib() - rss_before < 512);
}

TEST_CASE("fuzz: 2,000 damaged checkpoints and manifests are rejected or loaded, never crash", "[hardening][slow]") {
  const std::uint64_t seed = fuzz_seed();
  WARN("checkpoint fuzz seed " << seed << " (CHAOSBENCH_FUZZ_SEED)");
  std::mt19937_64 rng(seed);
  test::TempDir dir;
  const std::string ckpt = dir.file("ckpt");
  const std::string key = "mlp 8-8 sgd";
  constexpr std::size_t kElements = 72;
  {
    bench::train::CheckpointConfig c;
    c.dir = ckpt;
    c.async = false;
    c.full_every = 2;
    bench::train::CheckpointWriter writer(c);
    for (std::int64_t step = 10; step <= 30; step += 10) {
      bench::train::CheckpointState s;
      s.step = step;
      s.model_key = key;
      s.buffers = {{"params", std::vector<float>(kElements, static_cast<float>(step))},
                   {"momentum", std::vector<float>(kElements, 0.5f)}};
      writer.save(s);
    }
    for (const auto& done : writer.completed()) REQUIRE(done.error.empty());
  }
  std::vector<std::string> names;
  for (const auto& e : std::filesystem::directory_iterator(ckpt)) names.push_back(e.path().filename().string());
  std::sort(names.begin(), names.end());
  std::map<std::string, std::string> originals;
  for (const auto& n : names) originals[n] = test::read_file(ckpt + "/" + n);
  const long rss_before = max_rss_mib();
  int loaded = 0, none = 0;
  for (int i = 0; i < 2000; ++i) {
    for (const auto& [n, bytes] : originals) write_bytes(ckpt + "/" + n, bytes);
    std::string victim;  // one to three files damaged, the manifest among the candidates
    for (int k = 0; k < 1 + static_cast<int>(rng() % 3); ++k) {
      const std::string& name = names[rng() % names.size()];
      write_bytes(ckpt + "/" + name, mutate_bytes(originals[name], rng));
      victim += name + " ";
    }
    if (rng() % 4 == 0) ::unlink((ckpt + "/manifest.json").c_str());
    INFO("case " << i << ": " << victim);
    std::vector<bench::train::RejectedCheckpoint> rejected;
    auto r = bench::train::load_latest_checkpoint(ckpt, key, &rejected, kElements);
    if (r) {
      ++loaded;
      CHECK(r->state.buffers.size() == 2);
      for (const auto& [name, values] : r->state.buffers) CHECK(values.size() == kElements);
    } else {
      ++none;
    }
    for (const auto& rej : rejected) CHECK_FALSE(rej.reason.empty());
  }
  WARN(loaded << " loaded a good checkpoint, " << none << " found none");
  CHECK(max_rss_mib() - rss_before < 256);
}

}  // namespace file_fuzz_test
