// A hybrid rank's point-to-point links (bench/train/comm/peer_links.h), ranks as threads on
// loopback: messages taken in any order per (peer, tag), in order within one; a message
// the receiver does not accept breaks that link (never the process); a peer that leaves
// fails a waiting recv at once, and a silent one after the timeout.
#include <catch2/catch.hpp>

#include <atomic>
#include <thread>
#include <vector>

#include <gloo/rendezvous/file_store.h>
#include <gloo/rendezvous/prefix_store.h>

#include "bench/train/comm/gradient_reducer.h"
#include "bench/train/comm/peer_links.h"
#include "test_util.h"

namespace peer_links_test {  // this file's names, apart in a unity batch (tests/CMakeLists.txt)

using namespace chaosbench::bench::train;
using chaosbench::test::TempDir;
using namespace std::chrono_literals;

namespace {

constexpr std::uint32_t kGood = 7, kOther = 9;

bool small_known(std::uint32_t tag, std::uint64_t bytes) { return (tag == kGood || tag == kOther) && bytes <= 1024; }

// `world` ranks linked through `dir`, each running body(rank, links) on its own thread;
// returns each rank's error text (empty when none).
std::vector<std::string> run_ranks(int world, const std::function<void(int, PeerLinks&)>& body,
                                   std::chrono::milliseconds timeout = 5s) {
  TempDir dir;
  std::vector<std::string> errors(static_cast<std::size_t>(world));
  std::vector<std::thread> threads;
  for (int r = 0; r < world; ++r)
    threads.emplace_back([&, r] {
      try {
        gloo::rendezvous::FileStore file(dir.path());
        gloo::rendezvous::PrefixStore store("links", file);
        PeerLinks links(store, "peer", r, world, "127.0.0.1", timeout, small_known);
        body(r, links);
      } catch (const std::exception& e) {
        errors[static_cast<std::size_t>(r)] = e.what();
      }
    });
  for (auto& t : threads) t.join();
  return errors;
}

}  // namespace

TEST_CASE("peer links: every pair of 3 ranks, tags taken in any order, each tag in order", "[peer-links]") {
  std::vector<std::vector<float>> got(3);
  const auto errors = run_ranks(3, [&](int r, PeerLinks& links) {
    for (int peer = 0; peer < 3; ++peer) {
      if (peer == r) continue;
      for (float i : {1.0f, 2.0f}) {
        const float v = 100.0f * static_cast<float>(r) + i;
        links.send(peer, kGood, &v, sizeof v);
      }
      const float other = -static_cast<float>(r);
      links.send(peer, kOther, &other, sizeof other);
    }
    for (int peer = 0; peer < 3; ++peer) {
      if (peer == r) continue;
      float v = 0;
      links.recv(peer, kOther, &v, sizeof v);  // sent last, asked for first
      got[static_cast<std::size_t>(r)].push_back(v);
      for (int i = 0; i < 2; ++i) {
        links.recv(peer, kGood, &v, sizeof v);
        got[static_cast<std::size_t>(r)].push_back(v);
      }
    }
  });
  for (const auto& e : errors) CHECK(e.empty());
  CHECK(got[0] == std::vector<float>{-1, 101, 102, -2, 201, 202});
  CHECK(got[2] == std::vector<float>{0, 1, 2, -1, 101, 102});
}

TEST_CASE("peer links: a message nobody expects breaks its link, not the process", "[peer-links]") {
  std::atomic<bool> sent{false};
  const auto errors = run_ranks(2, [&](int r, PeerLinks& links) {
    if (r == 1) {
      std::vector<char> big(4096);  // over the receiver's 1024 bytes
      links.send(0, kGood, big.data(), big.size());
      sent = true;
      std::this_thread::sleep_for(200ms);
      return;
    }
    float v = 0;
    links.recv(1, kGood, &v, sizeof v);
  });
  CHECK(sent);
  CHECK_THAT(errors[0], Catch::Contains("nobody expects"));
}

TEST_CASE("peer links: a peer that leaves fails a waiting recv at once, a silent one after the timeout",
          "[peer-links]") {
  const auto start = std::chrono::steady_clock::now();
  auto errors = run_ranks(2, [&](int r, PeerLinks& links) {
    if (r == 0) {
      float v = 0;
      links.recv(1, kGood, &v, sizeof v);
    }
  });
  CHECK_THAT(errors[0], Catch::Contains("rank 1"));
  CHECK(std::chrono::steady_clock::now() - start < 4s);  // well before the 5 s timeout
  errors = run_ranks(2, [&](int r, PeerLinks& links) {
    float v = 0;
    if (r == 0) links.recv(1, kGood, &v, sizeof v);
    else std::this_thread::sleep_for(600ms);
  }, 300ms);
  CHECK_THAT(errors[0], Catch::Contains("nothing from rank 1 within 300 ms"));
}

}  // namespace peer_links_test
