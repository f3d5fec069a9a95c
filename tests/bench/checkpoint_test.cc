// Checkpoints: CheckpointWriter and load_latest_checkpoint on a real temporary directory.
// Round trips compare float bits (NaN, -0 and denormals included); damage is done to the
// files directly, as a failing disk or a crash mid-copy would.
#include <catch2/catch.hpp>

#include <sys/stat.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <random>
#include <set>

#include <nlohmann/json.hpp>

#include "bench/checkpoint/checkpoint_loader.h"
#include "bench/checkpoint/checkpoint_writer.h"
#include "test_util.h"

namespace chaosbench::bench::train {
namespace {

using chaosbench::test::TempDir;
const std::string kKey = "mlp 64-256-8 sgd";

CheckpointState random_state(std::int64_t step, std::size_t n, unsigned seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> normal(0.0f, 0.03f);
  CheckpointState s;
  s.step = step;
  s.model_key = kKey;
  std::vector<float> params(n), momentum(n / 2);
  for (float& v : params) v = normal(rng);
  for (float& v : momentum) v = normal(rng) * 0.1f;
  s.buffers = {{"params", std::move(params)}, {"momentum", std::move(momentum)}};
  return s;
}

// The state after a few steps that each change `fraction` of the elements.
CheckpointState evolve(CheckpointState s, std::int64_t step, double fraction, unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> pick(0.0, 1.0);
  s.step = step;
  for (auto& [name, values] : s.buffers) {
    for (float& v : values)
      if (pick(rng) < fraction) v -= 0.001f * static_cast<float>(pick(rng) - 0.5);
  }
  return s;
}

bool same_bits(const CheckpointState& a, const CheckpointState& b) {
  if (a.step != b.step || a.model_key != b.model_key || a.buffers.size() != b.buffers.size()) return false;
  for (std::size_t k = 0; k < a.buffers.size(); ++k) {
    const auto& x = a.buffers[k];
    const auto& y = b.buffers[k];
    if (x.first != y.first || x.second.size() != y.second.size()) return false;
    if (std::memcmp(x.second.data(), y.second.data(), 4 * x.second.size()) != 0) return false;
  }
  return true;
}

CheckpointConfig sync_config(const TempDir& dir) {
  CheckpointConfig c;
  c.dir = dir.file("ckpt");
  c.async = false;
  return c;
}

// Saves each state in turn and returns the results, checking none failed.
std::vector<SaveResult> save_all(CheckpointWriter& writer, const std::vector<CheckpointState>& states) {
  for (const auto& s : states) writer.save(s);
  writer.wait();
  auto results = writer.completed();
  for (const auto& r : results) REQUIRE(r.error.empty());
  return results;
}

void flip_byte(const std::string& path, std::uint64_t offset) {
  std::fstream f(path, std::ios::in | std::ios::out | std::ios::binary);
  f.seekg(static_cast<std::streamoff>(offset));
  char c = 0;
  f.get(c);
  f.seekp(static_cast<std::streamoff>(offset));
  f.put(static_cast<char>(c ^ 0x5a));
}

std::set<std::string> files_in(const std::string& dir) {
  std::set<std::string> names;
  for (const auto& e : std::filesystem::directory_iterator(dir)) names.insert(e.path().filename().string());
  return names;
}

// Four checkpoints at steps 100 (full), 150, 200, 250 (deltas on 100).
std::vector<CheckpointState> four_states() {
  std::vector<CheckpointState> s{random_state(100, 4000, 1)};
  for (std::int64_t step : {150, 200, 250}) s.push_back(evolve(s.back(), step, 0.05, static_cast<unsigned>(step)));
  return s;
}

// Writes four_states() into dir/ckpt, synchronously, and returns them.
std::vector<CheckpointState> write_four(const TempDir& dir) {
  auto states = four_states();
  CheckpointWriter writer(sync_config(dir));
  save_all(writer, states);
  return states;
}

// Loads dir/ckpt and checks it gives `expected` after rejecting exactly one newer file.
void check_one_rejection(const TempDir& dir, const CheckpointState& expected, const std::string& reason) {
  auto loaded = load_latest_checkpoint(dir.file("ckpt"), kKey);
  REQUIRE(loaded);
  CHECK(same_bits(loaded->state, expected));
  REQUIRE(loaded->rejected.size() == 1);
  CHECK(loaded->rejected[0].reason == reason);
}

}  // namespace

TEST_CASE("a full checkpoint round-trips bit-exactly, special values included", "[checkpoint]") {
  TempDir dir;
  CheckpointState s = random_state(100, 10000, 7);
  auto& p = s.buffers[0].second;
  p[0] = std::numeric_limits<float>::quiet_NaN();
  p[1] = -0.0f;
  p[2] = std::numeric_limits<float>::infinity();
  p[3] = std::numeric_limits<float>::denorm_min();
  s.buffers.emplace_back("empty", std::vector<float>{});
  {
    CheckpointConfig c = sync_config(dir);
    c.incremental = false;
    CheckpointWriter writer(c);
    auto results = save_all(writer, {s});
    REQUIRE(results.size() == 1);
    CHECK(results[0].full);
    CHECK(results[0].raw_bytes == 4 * 15000);
    CHECK(results[0].file == dir.file("ckpt") + "/ckpt-000000100.full");
    CHECK(results[0].bytes == std::filesystem::file_size(results[0].file));
  }
  auto loaded = load_latest_checkpoint(dir.file("ckpt"), kKey);
  REQUIRE(loaded);
  CHECK(loaded->file == "ckpt-000000100.full");
  CHECK(loaded->full);
  CHECK(loaded->rejected.empty());
  CHECK(same_bits(loaded->state, s));

  auto manifest = nlohmann::json::parse(chaosbench::test::read_file(dir.file("ckpt/manifest.json")));
  CHECK(manifest["version"] == 1);
  CHECK(manifest["model_key"] == kKey);
  REQUIRE(manifest["entries"].size() == 1);
  CHECK(manifest["entries"][0]["kind"] == "full");
  CHECK(manifest["entries"][0]["step"] == 100);
  CHECK(manifest["entries"][0]["xxh64"].get<std::string>().size() == 16);
}

TEST_CASE("a delta round-trips bit-exactly against its full", "[checkpoint]") {
  TempDir dir;
  auto states = four_states();
  CheckpointWriter writer(sync_config(dir));
  auto results = save_all(writer, {states[0], states[1]});
  REQUIRE(results.size() == 2);
  CHECK(results[0].full);
  CHECK_FALSE(results[1].full);
  auto loaded = load_latest_checkpoint(dir.file("ckpt"), kKey);
  REQUIRE(loaded);
  CHECK(loaded->file == "ckpt-000000150.delta");
  CHECK_FALSE(loaded->full);
  CHECK(same_bits(loaded->state, states[1]));
}

TEST_CASE("every full_every-th checkpoint is full", "[checkpoint]") {
  TempDir dir;
  CheckpointConfig c = sync_config(dir);
  c.full_every = 3;
  c.keep_full = 10;
  CheckpointWriter writer(c);
  std::vector<CheckpointState> states{random_state(1, 100, 1)};
  for (int i = 2; i <= 7; ++i) states.push_back(evolve(states.back(), i, 0.1, static_cast<unsigned>(i)));
  auto results = save_all(writer, states);
  std::vector<bool> full;
  for (const auto& r : results) full.push_back(r.full);
  CHECK(full == std::vector<bool>{true, false, false, true, false, false, true});
}

TEST_CASE("a corrupt newest checkpoint is rejected and the previous one used", "[checkpoint]") {
  TempDir dir;
  auto states = write_four(dir);
  const std::string newest = dir.file("ckpt/ckpt-000000250.delta");
  flip_byte(newest, std::filesystem::file_size(newest) - 20);  // inside the payload

  SECTION("with the manifest") {
    auto loaded = load_latest_checkpoint(dir.file("ckpt"), kKey);
    REQUIRE(loaded);
    CHECK(loaded->file == "ckpt-000000200.delta");
    CHECK(same_bits(loaded->state, states[2]));
    REQUIRE(loaded->rejected.size() == 1);
    CHECK(loaded->rejected[0].file == "ckpt-000000250.delta");
    CHECK(loaded->rejected[0].step == 250);
    CHECK(loaded->rejected[0].reason == "checksum mismatch");
  }
  SECTION("without a manifest the header's checksum catches it") {
    std::filesystem::remove(dir.file("ckpt/manifest.json"));
    check_one_rejection(dir, states[2], "checksum mismatch");
  }
}

TEST_CASE("a truncated or missing checkpoint is rejected with its reason", "[checkpoint]") {
  TempDir dir;
  auto states = write_four(dir);
  const std::string newest = dir.file("ckpt/ckpt-000000250.delta");
  const auto size = std::filesystem::file_size(newest);
  std::filesystem::resize_file(newest, size / 2);
  std::filesystem::remove(dir.file("ckpt/ckpt-000000200.delta"));
  const std::string expected = "truncated (" + std::to_string(size / 2) + " of " + std::to_string(size) + " bytes)";

  std::vector<RejectedCheckpoint> rejected;
  auto loaded = load_latest_checkpoint(dir.file("ckpt"), kKey, &rejected);
  REQUIRE(loaded);
  CHECK(same_bits(loaded->state, states[1]));
  REQUIRE(rejected.size() == 2);
  CHECK(rejected[0].reason == expected);
  CHECK(rejected[1].file == "ckpt-000000200.delta");
  CHECK(rejected[1].reason == "missing");

  SECTION("the header alone knows the length too") {
    std::filesystem::remove(dir.file("ckpt/manifest.json"));
    check_one_rejection(dir, states[1], expected);
  }
}

TEST_CASE("without a manifest the files are found by their headers", "[checkpoint]") {
  TempDir dir;
  auto states = write_four(dir);
  SECTION("missing") { std::filesystem::remove(dir.file("ckpt/manifest.json")); }
  SECTION("unreadable") { dir.write("ckpt/manifest.json", "{\"version\":1,\"entr"); }
  dir.write("ckpt/ckpt-000000300.full.tmp", "left by a crash");
  dir.write("ckpt/notes.txt", "not a checkpoint");
  const auto before = files_in(dir.file("ckpt"));
  auto loaded = load_latest_checkpoint(dir.file("ckpt"), kKey);
  REQUIRE(loaded);
  CHECK(loaded->file == "ckpt-000000250.delta");
  CHECK(same_bits(loaded->state, states[3]));
  CHECK(loaded->rejected.empty());
  CHECK(files_in(dir.file("ckpt")) == before);  // the loader only reads
}

TEST_CASE("a corrupt base full rejects its deltas", "[checkpoint]") {
  TempDir dir;
  CheckpointConfig c = sync_config(dir);
  c.full_every = 3;
  // 100 full, 110 and 120 deltas on it, 130 full, 140 delta on 130.
  std::vector<CheckpointState> states{random_state(100, 4000, 3)};
  for (std::int64_t step : {110, 120, 130, 140})
    states.push_back(evolve(states.back(), step, 0.05, static_cast<unsigned>(step)));
  {
    CheckpointWriter writer(c);
    save_all(writer, states);
  }
  flip_byte(dir.file("ckpt/ckpt-000000130.full"), 200);
  auto loaded = load_latest_checkpoint(dir.file("ckpt"), kKey);
  REQUIRE(loaded);
  CHECK(loaded->file == "ckpt-000000120.delta");
  CHECK(same_bits(loaded->state, states[2]));
  REQUIRE(loaded->rejected.size() == 2);
  CHECK(loaded->rejected[0].file == "ckpt-000000140.delta");
  CHECK(loaded->rejected[0].reason == "base ckpt-000000130.full is bad: checksum mismatch");
  CHECK(loaded->rejected[1].file == "ckpt-000000130.full");
  CHECK(loaded->rejected[1].reason == "checksum mismatch");
}

TEST_CASE("a checkpoint of another model is never loaded", "[checkpoint]") {
  TempDir dir;
  {
    CheckpointWriter writer(sync_config(dir));
    save_all(writer, {random_state(5, 100, 1)});
  }
  std::vector<RejectedCheckpoint> rejected;
  CHECK_FALSE(load_latest_checkpoint(dir.file("ckpt"), "other model", &rejected));
  REQUIRE(rejected.size() == 1);
  CHECK(rejected[0].reason.rfind("model key differs", 0) == 0);
  CHECK_FALSE(load_latest_checkpoint(dir.file("nonexistent"), kKey, &rejected));
  CHECK(rejected.empty());
}

TEST_CASE("a save at a lower step drops the newer timeline", "[checkpoint]") {
  TempDir dir;
  auto states = four_states();
  CheckpointWriter writer(sync_config(dir));
  save_all(writer, states);
  // A restart resumed from step 150's checkpoint and took another path.
  CheckpointState again = evolve(states[1], 200, 0.5, 99);
  again.step = 150;
  auto results = save_all(writer, {again});
  REQUIRE(results.size() == 1);
  CHECK_FALSE(results[0].full);  // still a delta on 100, which survives
  CHECK(files_in(dir.file("ckpt")) ==
        std::set<std::string>{"ckpt-000000100.full", "ckpt-000000150.delta", "manifest.json"});
  auto loaded = load_latest_checkpoint(dir.file("ckpt"), kKey);
  REQUIRE(loaded);
  CHECK(same_bits(loaded->state, again));

  // Dropping the base full too forces a full.
  CheckpointState earlier = random_state(80, 4000, 5);
  results = save_all(writer, {earlier});
  CHECK(results[0].full);
  CHECK(files_in(dir.file("ckpt")) == std::set<std::string>{"ckpt-000000080.full", "manifest.json"});
}

TEST_CASE("retention keeps the newest keep_full fulls and their deltas", "[checkpoint]") {
  TempDir dir;
  CheckpointConfig c = sync_config(dir);
  c.full_every = 2;
  c.keep_full = 2;
  std::vector<CheckpointState> states{random_state(10, 1000, 2)};
  for (std::int64_t step : {20, 30, 40, 50}) states.push_back(evolve(states.back(), step, 0.1, static_cast<unsigned>(step)));
  CheckpointWriter writer(c);
  save_all(writer, states);
  CHECK(files_in(dir.file("ckpt")) ==
        std::set<std::string>{"ckpt-000000030.full", "ckpt-000000040.delta", "ckpt-000000050.full", "manifest.json"});
  auto manifest = nlohmann::json::parse(chaosbench::test::read_file(dir.file("ckpt/manifest.json")));
  CHECK(manifest["entries"].size() == 3);
}

TEST_CASE("an async save blocks only for the copy and reports when written", "[checkpoint]") {
  TempDir dir;
  CheckpointConfig c;
  c.dir = dir.file("ckpt");
  c.zstd_level = 3;
  CheckpointState s = random_state(10, 2'000'000, 4);
  const CheckpointState original = s;
  std::vector<double> blocked;
  {
    CheckpointWriter writer(c);
    blocked.push_back(writer.save(s));
    // The snapshot was taken in save(): changing the state now changes nothing on disk.
    std::fill(s.buffers[0].second.begin(), s.buffers[0].second.end(), 1.0f);
    s.step = 20;
    blocked.push_back(writer.save(s));  // waits for the first write
    writer.wait();
    auto results = writer.completed();
    REQUIRE(results.size() == 2);
    CHECK(results[0].step == 10);
    CHECK(results[0].error.empty());
    CHECK(results[1].error.empty());
    CHECK_FALSE(results[1].full);
    CHECK(writer.completed().empty());
    // Generous: the copy of 12 MB against shuffling, compressing and fsyncing it.
    CHECK(blocked[0] < results[0].write_ms);
    s.step = 30;
    writer.save(s);  // the destructor waits for this one
  }
  auto loaded = load_latest_checkpoint(dir.file("ckpt"), kKey);
  REQUIRE(loaded);
  CHECK(loaded->state.step == 30);
  std::filesystem::remove(dir.file("ckpt/ckpt-000000030.delta"));
  std::filesystem::remove(dir.file("ckpt/ckpt-000000020.delta"));
  loaded = load_latest_checkpoint(dir.file("ckpt"), kKey);
  REQUIRE(loaded);
  CHECK(same_bits(loaded->state, original));
}

TEST_CASE("a delta where 1% of the elements changed is under a tenth of the full", "[checkpoint]") {
  TempDir dir;
  CheckpointState s = random_state(100, 1'000'000, 6);
  CheckpointWriter writer(sync_config(dir));
  auto results = save_all(writer, {s, evolve(s, 110, 0.01, 8)});
  REQUIRE(results.size() == 2);
  CHECK_FALSE(results[1].full);
  CHECK(results[1].bytes * 10 < results[0].bytes);
}

TEST_CASE("a write error is a SaveResult error, not a crash", "[checkpoint]") {
  TempDir dir;
  CheckpointConfig c;
  c.dir = dir.file("ckpt");
  CheckpointState s = random_state(10, 200'000, 9);
  SECTION("the directory is gone before the write") {
    CheckpointWriter writer(c);
    std::filesystem::remove_all(c.dir);
    writer.save(s);
    writer.wait();
    auto results = writer.completed();
    REQUIRE(results.size() == 1);
    CHECK_FALSE(results[0].error.empty());
    CHECK(results[0].error.find("No such file or directory") != std::string::npos);
  }
  SECTION("the directory goes during the write") {
    // Whether the rename fails or the write finished first is a race; either way the
    // result comes back and nothing crashes.
    CheckpointWriter writer(c);
    writer.save(random_state(10, 2'000'000, 9));
    std::error_code ec;
    std::filesystem::remove_all(c.dir, ec);
    writer.wait();
    CHECK(writer.completed().size() == 1);
  }
  SECTION("a directory that cannot be created throws at construction") {
    c.dir = "/proc/chaosbench-no-such-dir/ckpt";
    CHECK_THROWS_AS(CheckpointWriter(c), std::runtime_error);
  }
}

}  // namespace chaosbench::bench::train
