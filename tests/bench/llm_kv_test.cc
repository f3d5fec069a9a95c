// The transformer engine's scheduling (bench/llm/transformer/): the KV block allocator,
// continuous batching under a KV cache too small for its batch (preemption by
// recomputation must not change a greedy answer), cancellation freeing blocks, the
// waiting-queue limit, and an injected device fault.
#include <catch2/catch.hpp>

#include <chrono>
#include <atomic>
#include <condition_variable>
#include <functional>
#include <mutex>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "bench/llm/transformer/kv_block_allocator.h"
#include "bench/llm/transformer/transformer_engine.h"
#include "common/gpu/fault_control.h"
#include "common/files/unique_fd.h"
#include "test_util.h"

namespace llm_kv_test {  // this file's names, apart in a unity batch (tests/CMakeLists.txt)

using namespace chaosbench::bench::llm;
using namespace std::chrono_literals;

namespace {

TransformerEngineConfig tiny_engine(int kv_blocks, int block_size, int context) {
  TransformerEngineConfig c;
  c.model.layers = 2;
  c.model.dim = 32;
  c.model.heads = 4;
  c.model.kv_heads = 2;
  c.model.ffn = 48;
  c.scheduler.max_running = 8;
  c.scheduler.max_batched_tokens = 24;
  c.scheduler.kv_blocks = kv_blocks;
  c.scheduler.block_size = block_size;
  c.scheduler.max_waiting = 64;
  c.context = context;
  return c;
}

CompletionRequest request(std::string prompt, int max_tokens) {
  CompletionRequest r;
  r.prompt = std::move(prompt);
  r.max_tokens = max_tokens;
  r.ignore_eos = true;
  r.temperature = 0.0;
  return r;
}

struct Outcome {
  std::string text;
  int tokens = 0;
  bool finished = false;
  FinishReason reason = FinishReason::kStop;
  Usage usage;
};

// Starts every request at once and waits (10 s at most) for all to finish.
std::vector<Outcome> run_all(TransformerEngine& engine, const std::vector<CompletionRequest>& requests) {
  std::mutex mu;
  std::condition_variable cv;
  std::vector<Outcome> out(requests.size());
  std::vector<std::shared_ptr<Generation>> handles;
  for (std::size_t i = 0; i < requests.size(); ++i) {
    TokenSink sink{[&, i](std::string_view t) {
                     std::lock_guard lock(mu);
                     out[i].text += t;
                     ++out[i].tokens;
                   },
                   [&, i](FinishReason reason, Usage u) {
                     std::lock_guard lock(mu);
                     out[i].finished = true;
                     out[i].reason = reason;
                     out[i].usage = u;
                     cv.notify_all();
                   }};
    handles.push_back(engine.start(requests[i], TokenEngine::Clock::now(), std::move(sink)));
    REQUIRE(handles.back() != nullptr);
  }
  std::unique_lock lock(mu);
  cv.wait_for(lock, 10s, [&] {
    for (const auto& o : out)
      if (!o.finished) return false;
    return true;
  });
  return out;
}

bool wait_for(const std::function<bool()>& ok, std::chrono::milliseconds limit) {
  const auto end = std::chrono::steady_clock::now() + limit;
  while (std::chrono::steady_clock::now() < end) {
    if (ok()) return true;
    std::this_thread::sleep_for(2ms);
  }
  return ok();
}

}  // namespace

TEST_CASE("llm-kv: the block allocator hands out, runs out and takes back", "[llm-kv]") {
  KvBlockAllocator a(4);
  std::vector<int> got;
  for (int i = 0; i < 4; ++i) got.push_back(*a.allocate());
  CHECK(got == std::vector<int>{0, 1, 2, 3});
  CHECK(!a.allocate().has_value());
  CHECK(a.used() == 4);
  CHECK(a.usage() == 1.0);
  a.release(2);
  CHECK(a.free_count() == 1);
  CHECK(*a.allocate() == 2);
  CHECK_THROWS_AS(a.release(7), std::logic_error);
  a.release_all(got);
  CHECK(got.empty());
  CHECK(a.used() == 0);
  CHECK_THROWS_AS(a.release(0), std::logic_error);  // freed twice
}

TEST_CASE("llm-kv: preemption under a tiny KV cache keeps every greedy answer", "[llm-kv]") {
  std::vector<CompletionRequest> requests;
  for (int i = 0; i < 6; ++i) requests.push_back(request("prompt number " + std::to_string(i), 28));
  TransformerEngine roomy(tiny_engine(256, 4, 48));
  const auto reference = run_all(roomy, requests);
  CHECK(roomy.preemptions() == 0);
  TransformerEngine tight(tiny_engine(12, 4, 48));  // one whole sequence fits, six do not
  const auto squeezed = run_all(tight, requests);
  CHECK(tight.preemptions() > 0);
  for (std::size_t i = 0; i < requests.size(); ++i) {
    INFO("request " << i);
    REQUIRE(squeezed[i].finished);
    CHECK(squeezed[i].tokens == 28);
    CHECK(squeezed[i].usage.completion_tokens == 28);
    CHECK(squeezed[i].text == reference[i].text);
  }
  CHECK(wait_for([&] { return tight.active() == 0 && tight.kv_cache_usage() == 0.0; }, 1s));
  CHECK(tight.running() == 0);
  CHECK(tight.waiting() == 0);
}

TEST_CASE("llm-kv: a cancelled generation frees its KV blocks", "[llm-kv]") {
  TransformerEngine engine(tiny_engine(256, 4, 1000));
  std::atomic<int> tokens{0};
  std::atomic<bool> finished{false};
  auto g = engine.start(request("cancel me", 990), TokenEngine::Clock::now(),
                        {[&](std::string_view) { ++tokens; }, [&](FinishReason, Usage) { finished = true; }});
  REQUIRE(g != nullptr);
  REQUIRE(wait_for([&] { return tokens > 0; }, 2s));
  g->cancel();
  g->cancel();  // idempotent
  CHECK(engine.active() == 0);  // at once
  CHECK(wait_for([&] { return engine.kv_cache_usage() == 0.0 && engine.running() == 0; }, 1s));
  const int after = tokens;
  std::this_thread::sleep_for(20ms);
  CHECK(tokens == after);
  CHECK(!finished);
}

TEST_CASE("llm-kv: start refuses past max_running + max_waiting", "[llm-kv]") {
  auto cfg = tiny_engine(256, 4, 1000);
  cfg.scheduler.max_running = 1;
  cfg.scheduler.max_waiting = 1;
  TransformerEngine engine(cfg);
  auto a = engine.start(request("a", 990), TokenEngine::Clock::now(), {[](std::string_view) {}, [](FinishReason, Usage) {}});
  auto b = engine.start(request("b", 990), TokenEngine::Clock::now(), {[](std::string_view) {}, [](FinishReason, Usage) {}});
  REQUIRE(a != nullptr);
  REQUIRE(b != nullptr);
  CHECK(engine.start(request("c", 4), TokenEngine::Clock::now(), {[](std::string_view) {}, [](FinishReason, Usage) {}}) ==
        nullptr);
  CHECK(wait_for([&] { return engine.waiting() == 1 && engine.running() == 1; }, 1s));
  a->cancel();
  b->cancel();
  CHECK(wait_for([&] { return engine.kv_cache_usage() == 0.0 && engine.waiting() == 0; }, 1s));
}

// The harness arms gpu.oom for one shot in the rank's control block, as a scenario does.
TEST_CASE("llm-kv: an injected gpu.oom fails the step's requests and the next ones run", "[llm-kv]") {
  chaosbench::test::TempDir dir;
  const std::string path = dir.file("rank0.ctl");
  const chaosbench::common::UniqueFd block{chaosbench::common::FaultControl::create(path, 0)};
  REQUIRE(block);
  const auto harness = chaosbench::common::FaultControl::open(path);
  REQUIRE(harness);
  auto cfg = tiny_engine(256, 4, 100);
  cfg.faults = std::make_shared<chaosbench::bench::DeviceFaults>(chaosbench::common::FaultControl::open(path));
  TransformerEngine engine(cfg);
  chaosbench::common::ArmedFault oom;
  oom.error_code = 2;
  oom.shots = 1;
  harness->arm(CB_OOM, oom);
  const auto failed = run_all(engine, {request("first", 20)});
  CHECK(failed[0].finished);
  CHECK(failed[0].tokens == 0);  // ended at its first step, with an error (the server answers 500)
  CHECK(failed[0].reason == FinishReason::kError);
  CHECK(harness->fired(CB_OOM) == 1);
  const auto next = run_all(engine, {request("second", 20)});
  CHECK(next[0].tokens == 20);
  CHECK(next[0].reason == FinishReason::kLength);
  CHECK(wait_for([&] { return engine.active() == 0 && engine.kv_cache_usage() == 0.0; }, 1s));
}

}  // namespace llm_kv_test
