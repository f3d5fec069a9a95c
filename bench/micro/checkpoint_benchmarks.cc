#include "bench/micro/checkpoint_benchmarks.h"

#include <bit>
#include <cstdint>
#include <memory>
#include <mutex>
#include <stdexcept>

#include "bench/micro/scratch_dir.h"
#include "bench/checkpoint/checkpoint_writer.h"
#include "bench/compute/counter_rng.h"

namespace chaosbench::bench::micro {
namespace {

constexpr std::size_t kStateBytes = 64u << 20;
constexpr int kZstdLevel = 1;

// The state to save, made once: uniform floats in [-1, 1). Random mantissas keep zstd
// from shrinking the file to nothing, as real parameters do.
class CheckpointFixture {
 public:
  const train::CheckpointState& state() {
    std::call_once(once_, [this] {
      state_.model_key = "micro-benchmark";
      std::vector<float> values(kStateBytes / sizeof(float));
      const std::uint64_t key = train::stream_key(1, 0);
      for (std::size_t i = 0; i < values.size(); ++i) {
        const auto bits = static_cast<std::uint32_t>(train::random_bits(key, i) >> 41);  // 23 bits
        values[i] = std::bit_cast<float>(0x3f800000u | bits) * 2.0f - 3.0f;  // [1,2) -> [-1,1)
      }
      state_.buffers.emplace_back("params", std::move(values));
    });
    return state_;
  }

 private:
  std::once_flag once_;
  train::CheckpointState state_;
};

void write_body(benchmark::State& state, CheckpointFixture& fixture, const std::string& parent) {
  train::CheckpointState snapshot = fixture.state();
  ScratchDir dir(parent, ".micro-ckpt-");
  std::uint64_t bytes = 0;
  {
    train::CheckpointWriter writer({.dir = dir.path(), .incremental = false, .full_every = 1, .async = false,
                                    .keep_full = 1, .zstd_level = kZstdLevel});
    for (auto _ : state) {
      ++snapshot.step;
      writer.save(snapshot);
      for (const auto& r : writer.completed()) {
        if (!r.error.empty()) throw std::runtime_error("checkpoint write failed: " + r.error);
        state.SetIterationTime(r.write_ms * 1e-3);
        bytes += r.bytes;
      }
    }
  }
  state.counters["bytes"] = benchmark::Counter(static_cast<double>(bytes), benchmark::Counter::kIsRate);
}

}  // namespace

std::vector<MicroBenchmark> checkpoint_benchmarks(const std::string& dir) {
  auto fixture = std::make_shared<CheckpointFixture>();
  MicroBenchmark row;
  row.name = "ckpt/write_bw/full";
  row.metric = "ckpt/write_bw";
  row.labels = {{"kind", "full"}, {"state_bytes", static_cast<std::int64_t>(kStateBytes)},
                {"zstd_level", std::int64_t{kZstdLevel}}, {"mode", "sync"}};
  row.measure = {"bytes", 1e-9};
  row.timing = Timing::kManualTime;
  row.body = guarded([fixture, dir](benchmark::State& state) { write_body(state, *fixture, dir); });
  return {std::move(row)};
}

}  // namespace chaosbench::bench::micro
