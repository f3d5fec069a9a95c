// The trainer's communication pieces: gradient buckets, the bucketed allreduce against
// real gloo ranks (threads on loopback), and the elastic membership agreement through
// files, with ranks as threads.
#include <catch2/catch.hpp>

#include <atomic>
#include <numeric>
#include <thread>

#include <gloo/rendezvous/context.h>
#include <gloo/rendezvous/file_store.h>
#include <gloo/rendezvous/prefix_store.h>
#include <gloo/transport/tcp/device.h>

#include "bench/train/comm/grad_allreducer.h"
#include "bench/train/membership/membership.h"
#include "bench/train/membership/store_membership_backend.h"
#include "bench/train/membership/file_membership_backend.h"
#include "harness/site/rendezvous_server.h"
#include "layer_spans.h"
#include "test_util.h"

namespace train_comm_test {  // this file's names, apart in a unity batch (tests/CMakeLists.txt)

using namespace chaosbench::bench::train;
using chaosbench::test::spans_of;
using chaosbench::test::TempDir;

namespace {

// Where the membership tests keep their records: files in a temporary directory, or
// keys in a rendezvous server on loopback (one connection per MembershipStore).
class MembershipPlace {
 public:
  explicit MembershipPlace(std::string kind) : kind_(std::move(kind)) {
    if (kind_ == "tcp") server_ = std::make_unique<chaosbench::harness::RendezvousServer>("t0ken");
  }
  std::unique_ptr<MembershipBackend> open() {
    if (!server_) return std::make_unique<FileMembershipBackend>(dir_.path());
    auto client = std::make_shared<chaosbench::bench::TcpStoreClient>("127.0.0.1", server_->port(), "t0ken");
    return std::make_unique<StoreMembershipBackend>(client, "run1-a0.elastic");
  }

 private:
  std::string kind_;
  TempDir dir_;
  std::unique_ptr<chaosbench::harness::RendezvousServer> server_;
};

// A gloo context of `size` ranks on loopback, rendezvous through files in `dir`.
std::shared_ptr<gloo::Context> connect(const std::string& dir, const std::string& prefix, int rank, int size) {
  gloo::rendezvous::FileStore file(dir);
  gloo::rendezvous::PrefixStore store(prefix, file);
  gloo::transport::tcp::attr attr;
  attr.hostname = "127.0.0.1";
  auto device = gloo::transport::tcp::CreateDevice(attr);
  auto context = std::make_shared<gloo::rendezvous::Context>(rank, size);
  context->connectFullMesh(store, device);
  return context;
}

}  // namespace

TEST_CASE("buckets hold whole layers, last layer first, closed at the bucket size", "[train]") {
  auto spans = spans_of({100, 300, 50, 20});  // floats per layer
  auto b = make_buckets(spans, 256 * sizeof(float));
  REQUIRE(b.size() == 2);
  CHECK(b[0].last_layer == 3);
  CHECK(b[0].first_layer == 1);  // 20 + 50 < 256, then 300 closes it
  CHECK(b[0].offset == 100);
  CHECK(b[0].count == 370);
  CHECK(b[1].first_layer == 0);
  CHECK(b[1].offset == 0);
  CHECK(b[1].count == 100);
  // One float per bucket: a bucket per layer.
  CHECK(make_buckets(spans, 4).size() == 4);
  // Everything in one.
  auto all = make_buckets(spans, 1 << 20);
  REQUIRE(all.size() == 1);
  CHECK(all[0].count == 470);
}

TEST_CASE("the bucketed allreduce sums gradients and extras across ranks", "[train]") {
  TempDir dir;
  constexpr int kRanks = 3;
  const auto spans = spans_of({1000, 5000, 300, 17});
  const std::size_t total = 6317;
  std::vector<std::vector<float>> grads(kRanks, std::vector<float>(total));
  std::vector<StepComm> results(kRanks);
  std::vector<std::string> errors(kRanks);
  std::vector<std::thread> threads;
  for (int r = 0; r < kRanks; ++r) {
    threads.emplace_back([&, r] {
      try {
        auto context = connect(dir.path(), "buckets", r, kRanks);
        GradientAllreducer ar(context, grads[r].data(), spans, 4096 * sizeof(float), std::chrono::seconds(10), 2);
        for (int step = 0; step < 2; ++step) {
          for (std::size_t i = 0; i < total; ++i) grads[r][i] = static_cast<float>(r + 1) * static_cast<float>(i % 7);
          ar.begin_step({static_cast<float>(r), 1.0f});
          for (int l = 3; l >= 0; --l) ar.layer_done(l);
          results[r] = ar.finish();
        }
      } catch (const std::exception& e) {
        errors[r] = e.what();
      }
    });
  }
  for (auto& t : threads) t.join();
  for (int r = 0; r < kRanks; ++r) {
    INFO("rank " << r);
    CHECK(errors[r].empty());
    for (std::size_t i = 0; i < total; i += 97) CHECK(grads[r][i] == 6.0f * static_cast<float>(i % 7));  // 1+2+3
    REQUIRE(results[r].extras.size() == 2);
    CHECK(results[r].extras[0] == 3.0f);  // 0+1+2
    CHECK(results[r].extras[1] == 3.0f);
    CHECK(results[r].comm_total_ms > 0);
  }
}

TEST_CASE("a dead peer makes finish() throw CollectiveError, promptly", "[train]") {
  TempDir dir;
  const auto spans = spans_of({50000});
  std::vector<float> g0(50000, 1.0f);
  std::string error;
  double seconds = 0;
  // The peer leaves without taking part: destroying its context closes its connections.
  // It waits until this side is connected too, or this side's connect could see it go.
  std::atomic<bool> connected{false};
  std::thread peer([&] {
    auto context = connect(dir.path(), "dead", 1, 2);
    while (!connected) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  });
  {
    std::shared_ptr<gloo::Context> context;
    try {
      context = connect(dir.path(), "dead", 0, 2);
    } catch (...) {
      connected = true;
      peer.join();
      throw;
    }
    connected = true;
    peer.join();
    GradientAllreducer ar(context, g0.data(), spans, 1 << 20, std::chrono::seconds(20), 1);
    auto start = std::chrono::steady_clock::now();
    ar.begin_step({0.0f});
    ar.layer_done(0);
    try {
      ar.finish();
    } catch (const CollectiveError& e) {
      error = e.what();
    }
    seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  }
  CHECK_FALSE(error.empty());
  CHECK(seconds < 5.0);  // a closed connection, not the 20 s timeout
}

TEST_CASE("survivors of a failure agree on one membership, the newest step is the source", "[train]") {
  MembershipPlace place(GENERATE(as<std::string>{}, "file", "tcp"));
  Membership gen0;
  gen0.members = {0, 1, 2, 3};
  // Rank 2 died; rank 3 completed one step more than 0 and 1.
  const std::vector<std::pair<int, std::int64_t>> survivors{{0, 57}, {1, 57}, {3, 58}};
  std::vector<Membership> agreed(survivors.size());
  std::vector<std::thread> threads;
  for (std::size_t i = 0; i < survivors.size(); ++i) {
    threads.emplace_back([&, i] {
      std::this_thread::sleep_for(std::chrono::milliseconds(30 * i));  // they notice at different times
      MembershipStore store(place.open(), survivors[i].first, std::chrono::milliseconds(200));
      agreed[i] = store.agree_after_failure(gen0, survivors[i].second, std::chrono::seconds(5));
    });
  }
  for (auto& t : threads) t.join();
  for (const auto& m : agreed) {
    CHECK(m.generation == 1);
    CHECK(m.members == std::vector<int>{0, 1, 3});
    CHECK(m.source == 3);
    CHECK(m.step == 58);
  }
  CHECK(agreed[0].index_of(3) == 2);
  CHECK(agreed[0].index_of(2) == -1);
}

TEST_CASE("a returning rank is admitted in the generation the leader grows", "[train]") {
  MembershipPlace place(GENERATE(as<std::string>{}, "file", "tcp"));
  MembershipStore leader(place.open(), 0, std::chrono::milliseconds(100));
  MembershipStore other(place.open(), 1, std::chrono::milliseconds(100));
  Membership gen1;
  gen1.generation = 1;
  gen1.members = {0, 1};
  CHECK(leader.pending_joiners(gen1).empty());
  std::optional<Membership> admitted;
  std::thread joiner([&] {
    MembershipStore store(place.open(), 2, std::chrono::milliseconds(100));
    admitted = store.wait_for_admission(1, std::chrono::seconds(10));
  });
  std::vector<int> waiting;
  for (int i = 0; i < 200 && waiting.empty(); ++i) {
    waiting = leader.pending_joiners(gen1);
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  REQUIRE(waiting == std::vector<int>{2});
  auto gen2 = leader.grow(gen1, waiting, 120);
  auto seen = other.await_generation(2, std::chrono::seconds(2));
  joiner.join();
  REQUIRE(admitted);
  CHECK(admitted->generation == 2);
  CHECK(admitted->members == std::vector<int>{0, 1, 2});
  CHECK(admitted->source == 0);
  CHECK(admitted->step == 120);
  REQUIRE(seen);
  CHECK(seen->members == gen2.members);
  CHECK(leader.pending_joiners(gen2).empty());  // it removed its request
}

TEST_CASE("a rank waiting to join stops waiting when training has finished", "[train]") {
  MembershipPlace place(GENERATE(as<std::string>{}, "file", "tcp"));
  MembershipStore leader(place.open(), 0, std::chrono::milliseconds(100));
  leader.mark_finished();
  MembershipStore late(place.open(), 3, std::chrono::milliseconds(100));
  auto start = std::chrono::steady_clock::now();
  CHECK_FALSE(late.wait_for_admission(0, std::chrono::seconds(10)));
  CHECK(late.finished());
  CHECK(std::chrono::steady_clock::now() - start < std::chrono::seconds(2));
}

TEST_CASE("a grow that loses to a failure's proposal returns that proposal, for the caller to reject", "[train]") {
  MembershipPlace place(GENERATE(as<std::string>{}, "file", "tcp"));
  Membership gen0;
  gen0.members = {0, 1, 2};
  MembershipStore survivor(place.open(), 1, std::chrono::milliseconds(50));
  auto failed = survivor.agree_after_failure(gen0, 10, std::chrono::seconds(1));  // alone: {1}
  REQUIRE(failed.members == std::vector<int>{1});
  MembershipStore leader(place.open(), 0, std::chrono::milliseconds(50));
  auto grown = leader.grow(gen0, {3}, 10);
  CHECK(grown.generation == 1);
  CHECK(grown.members == std::vector<int>{1});  // not the admission the leader asked for
  CHECK(grown.source == 1);
}

TEST_CASE("a dropped join request is made again by a joiner still waiting", "[train]") {
  MembershipPlace place(GENERATE(as<std::string>{}, "file", "tcp"));
  MembershipStore leader(place.open(), 0, std::chrono::milliseconds(50));
  Membership gen0;
  gen0.members = {0, 1};
  std::atomic<bool> done{false};
  std::thread joiner([&] {
    MembershipStore store(place.open(), 2, std::chrono::milliseconds(50));
    (void)store.wait_for_admission(0, std::chrono::seconds(3));
    done = true;
  });
  auto wait_for_request = [&] {
    for (int i = 0; i < 300; ++i) {
      if (!leader.pending_joiners(gen0).empty()) return true;
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    return false;
  };
  REQUIRE(wait_for_request());
  leader.forget_joiners({2});
  CHECK(wait_for_request());  // registered again
  leader.mark_finished();
  joiner.join();
  CHECK(done);
}

}  // namespace train_comm_test
