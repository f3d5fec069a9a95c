// The gradient ring on connections of its own (bench/train/comm/tcp_ring_reducer.h), with ranks
// as threads on loopback and the rendezvous through files: sums and extras for 1 to 5
// ranks, in place and staged, buckets smaller than the ring; a rank whose gradients come
// late; a peer that dies; a peer that goes silent.
#include <catch2/catch.hpp>

#include <atomic>
#include <thread>

#include <gloo/rendezvous/file_store.h>
#include <gloo/rendezvous/prefix_store.h>

#include "bench/train/comm/tcp_ring_reducer.h"
#include "layer_spans.h"
#include "test_util.h"

namespace tcp_ring_test {  // this file's names, apart in a unity batch (tests/CMakeLists.txt)

using namespace chaosbench::bench::train;
using chaosbench::test::spans_of;
using chaosbench::test::TempDir;
using namespace std::chrono_literals;

namespace {

struct Ring {
  gloo::rendezvous::FileStore file;
  gloo::rendezvous::PrefixStore store;
  Ring(const std::string& dir, const std::string& prefix) : file(dir), store(prefix, file) {}
};

// Rank 1 of a 2-rank ring, on a thread: it forms the ring, takes no step, and leaves
// (closing its connections) when told to or at the end of the scope.
class IdlePeer {
 public:
  IdlePeer(const std::string& dir, const std::vector<LayerSpan>& spans) : grads_(spans.back().offset + spans.back().count + 1) {
    thread_ = std::thread([this, dir, spans] {
      Ring ring(dir, "ring");
      TcpRingReducer reducer(ring.store, "grads", 1, 2, "127.0.0.1", grads_.data(), spans, 1 << 20, 10s, 1, 1);
      while (!leave_) std::this_thread::sleep_for(1ms);
    });
  }
  ~IdlePeer() { leave(); }
  void leave() {
    leave_ = true;
    if (thread_.joinable()) thread_.join();
  }

 private:
  std::vector<float> grads_;
  std::atomic<bool> leave_{false};
  std::thread thread_;
};

// `ranks` threads, each summing three steps of gradients (rank + 1) x (i % 7) and extras
// {rank, 1}; the later ranks' backward comes later, so the earlier ranks' data arrives
// before theirs is final. Returns each rank's error (empty when none).
std::vector<std::string> run_ring(int ranks, const std::vector<std::size_t>& layers, std::uint64_t bucket_bytes,
                                  std::size_t tail, std::vector<std::vector<float>>& grads,
                                  std::vector<StepComm>& results) {
  TempDir dir;
  const auto spans = spans_of(layers);
  std::size_t total = 0;
  for (auto c : layers) total += c;
  grads.assign(static_cast<std::size_t>(ranks), std::vector<float>(total + tail));
  results.assign(static_cast<std::size_t>(ranks), {});
  std::vector<std::string> errors(static_cast<std::size_t>(ranks));
  std::vector<std::thread> threads;
  for (int r = 0; r < ranks; ++r) {
    threads.emplace_back([&, r] {
      try {
        Ring ring(dir.path(), "ring");
        auto& g = grads[static_cast<std::size_t>(r)];
        TcpRingReducer reducer(ring.store, "grads", r, ranks, "127.0.0.1", g.data(), spans, bucket_bytes, 10s, 2, tail);
        for (int step = 0; step < 3; ++step) {
          reducer.begin_step({static_cast<float>(r), 1.0f});
          std::this_thread::sleep_for(std::chrono::milliseconds(5 * r));
          for (std::size_t i = 0; i < total; ++i) g[i] = static_cast<float>(r + 1) * static_cast<float>(i % 7);
          for (int l = static_cast<int>(layers.size()) - 1; l >= 0; l -= 2) reducer.layer_done(l);  // gaps
          results[static_cast<std::size_t>(r)] = reducer.finish();
        }
      } catch (const std::exception& e) {
        errors[static_cast<std::size_t>(r)] = e.what();
      }
    });
  }
  for (auto& t : threads) t.join();
  return errors;
}

}  // namespace

TEST_CASE("tcp ring: sums gradients and extras across ranks, in place and staged, every rank the same bits",
          "[train][tcp-ring]") {
  const std::vector<std::size_t> layers = {1000, 5000, 3, 300, 17};  // a 3-float layer: segments of 0 floats
  for (int ranks : {1, 2, 3, 5}) {
    for (std::size_t tail : {std::size_t{2}, std::size_t{0}}) {
      for (std::uint64_t bucket : {std::uint64_t{64}, std::uint64_t{1} << 20}) {
        INFO(ranks << " ranks, tail " << tail << ", buckets of " << bucket << " B");
        std::vector<std::vector<float>> grads;
        std::vector<StepComm> results;
        const auto errors = run_ring(ranks, layers, bucket, tail, grads, results);
        const float sum = static_cast<float>(ranks * (ranks + 1) / 2);
        for (int r = 0; r < ranks; ++r) {
          INFO("rank " << r);
          CHECK(errors[static_cast<std::size_t>(r)].empty());
          for (std::size_t i = 0; i < 6320; i += 13) CHECK(grads[static_cast<std::size_t>(r)][i] == sum * static_cast<float>(i % 7));
          CHECK(grads[static_cast<std::size_t>(r)] == grads[0]);
          const auto& extras = results[static_cast<std::size_t>(r)].extras;
          REQUIRE(extras.size() == 2);
          CHECK(extras[0] == static_cast<float>(ranks * (ranks - 1) / 2));
          CHECK(extras[1] == static_cast<float>(ranks));
          if (ranks > 1) CHECK(results[static_cast<std::size_t>(r)].comm_total_ms > 0);
        }
      }
    }
  }
}

// finish_each (no assertions on the ranks' threads: Catch2's are not thread-safe):
// bucket 0's extras first, then every bucket once, in order, already summed
// when handed over; a step its accept() refuses hands over nothing.
TEST_CASE("tcp ring: finish_each hands over each bucket summed, in order, once accepted", "[train][tcp-ring]") {
  TempDir dir;
  constexpr int kRanks = 3;
  const auto spans = spans_of({700, 3000, 50, 9});
  const std::size_t total = 3759;
  std::vector<std::vector<float>> grads(kRanks, std::vector<float>(total + 2));
  std::vector<std::vector<std::pair<std::size_t, std::size_t>>> used(kRanks);
  std::vector<int> wrong(kRanks, 0), refused_uses(kRanks, 0);
  std::vector<float> loss_sum(kRanks, 0);
  std::vector<std::string> errors(kRanks);
  std::vector<std::thread> threads;
  for (int r = 0; r < kRanks; ++r) {
    threads.emplace_back([&, r] {
      try {
        Ring ring(dir.path(), "ring");
        auto& g = grads[static_cast<std::size_t>(r)];
        TcpRingReducer reducer(ring.store, "grads", r, kRanks, "127.0.0.1", g.data(), spans, 64, 10s, 2, 2);
        for (int step = 0; step < 2; ++step) {
          reducer.begin_step({static_cast<float>(r + 1), 0.0f});
          for (std::size_t i = 0; i < total; ++i) g[i] = static_cast<float>(r + 1);
          for (int l = 3; l >= 0; --l) reducer.layer_done(l);
          StepComm out;
          const bool accept = step == 0;
          if (!reducer.finish_each(
              [&](const std::vector<float>& extras) {
                loss_sum[static_cast<std::size_t>(r)] = extras.at(0);
                return accept;
              },
              [&](std::size_t offset, std::size_t count) {
                if (!accept) ++refused_uses[static_cast<std::size_t>(r)];
                used[static_cast<std::size_t>(r)].emplace_back(offset, count);
                for (std::size_t i = offset; i < offset + count; ++i) wrong[static_cast<std::size_t>(r)] += g[i] != 6.0f;
              },
              out))
            throw std::runtime_error("finish_each is not supported");
        }
      } catch (const std::exception& e) {
        errors[static_cast<std::size_t>(r)] = e.what();
      }
    });
  }
  for (auto& t : threads) t.join();
  const auto buckets = make_buckets(spans, 64);
  for (int r = 0; r < kRanks; ++r) {
    INFO("rank " << r);
    CHECK(errors[static_cast<std::size_t>(r)].empty());
    CHECK(loss_sum[static_cast<std::size_t>(r)] == 6.0f);
    CHECK(wrong[static_cast<std::size_t>(r)] == 0);
    CHECK(refused_uses[static_cast<std::size_t>(r)] == 0);
    REQUIRE(used[static_cast<std::size_t>(r)].size() == buckets.size());
    for (std::size_t b = 0; b < buckets.size(); ++b)
      CHECK(used[static_cast<std::size_t>(r)][b] == std::make_pair(buckets[b].offset, buckets[b].count));
  }
}

TEST_CASE("tcp ring: a dead peer makes finish() throw CollectiveError, promptly", "[train][tcp-ring]") {
  TempDir dir;
  const auto spans = spans_of({50000});
  std::vector<float> g0(50001, 1.0f);
  std::string error;
  double seconds = 0;
  {
    IdlePeer peer(dir.path(), spans);
    Ring ring(dir.path(), "ring");
    TcpRingReducer reducer(ring.store, "grads", 0, 2, "127.0.0.1", g0.data(), spans, 1 << 20, 20s, 1, 1);
    peer.leave();  // its destructor closes both connections
    const auto start = std::chrono::steady_clock::now();
    reducer.begin_step({0.0f});
    reducer.layer_done(0);
    try {
      reducer.finish();
    } catch (const CollectiveError& e) {
      error = e.what();
    }
    seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  }
  CHECK_THAT(error, Catch::Contains("rank 1"));
  CHECK(seconds < 5.0);  // a closed connection, not the 20 s timeout
}

TEST_CASE("tcp ring: a peer that goes silent fails the step after the timeout", "[train][tcp-ring]") {
  TempDir dir;
  const auto spans = spans_of({1000});
  std::vector<float> g0(1001, 1.0f);
  std::string error;
  {
    IdlePeer peer(dir.path(), spans);  // in the ring, never stepping
    Ring ring(dir.path(), "ring");
    TcpRingReducer reducer(ring.store, "grads", 0, 2, "127.0.0.1", g0.data(), spans, 1 << 20, 300ms, 1, 1);
    reducer.begin_step({0.0f});
    reducer.layer_done(0);
    try {
      reducer.finish();
    } catch (const CollectiveError& e) {
      error = e.what();
    }
  }
  CHECK_THAT(error, Catch::Contains("nothing from rank 1 for 300 ms"));
}

TEST_CASE("tcp ring: no ring without every rank, within the timeout", "[train][tcp-ring]") {
  TempDir dir;
  Ring ring(dir.path(), "alone");
  std::vector<float> g(11, 1.0f);
  const auto start = std::chrono::steady_clock::now();
  CHECK_THROWS_AS(TcpRingReducer(ring.store, "grads", 0, 2, "127.0.0.1", g.data(), spans_of({10}), 1 << 20, 300ms, 1, 1),
                  CollectiveError);
  CHECK(std::chrono::steady_clock::now() - start < 5s);
}

}  // namespace tcp_ring_test
