// The controller-agent link's frames and proofs: round trips in any split, broken peers
// refused, HMAC-SHA256 against RFC 4231, proofs bound to secret, run, role and nonce.
#include <catch2/catch.hpp>

#include <random>
#include <set>

#include "harness/agent/link_auth.h"
#include "harness/agent/link_frame.h"

namespace agent_link_test {  // this file's names, apart in a unity batch (tests/CMakeLists.txt)

using namespace chaosbench::harness;

TEST_CASE("agent link: frames come back whole however the bytes are split", "[agent-link]") {
  const std::string big(100000, 'x');
  std::string wire = encode_frame(MessageType::kHello, R"({"version":"0.1.0"})") +
                     encode_frame(MessageType::kRecords, big) + encode_frame(MessageType::kBye, "");
  for (std::size_t chunk : {std::size_t{1}, std::size_t{3}, std::size_t{4096}, wire.size()}) {
    FrameReader reader;
    std::vector<Frame> frames;
    for (std::size_t at = 0; at < wire.size(); at += chunk) {
      reader.feed(std::string_view(wire).substr(at, chunk));
      while (auto f = reader.next()) frames.push_back(std::move(*f));
    }
    REQUIRE(frames.size() == 3);
    CHECK(frames[0].type == MessageType::kHello);
    CHECK(frames[0].payload == R"({"version":"0.1.0"})");
    CHECK(frames[1].payload == big);
    CHECK(frames[2].type == MessageType::kBye);
    CHECK(frames[2].payload.empty());
    CHECK(reader.buffered() == 0);
    CHECK(reader.error().empty());
  }
}

TEST_CASE("agent link: an oversized, empty or unknown frame breaks the link for good", "[agent-link]") {
  FrameReader oversized;
  oversized.feed(std::string("\x01\x00\x00\x01\x06", 5));  // 16 MiB + 1
  CHECK_FALSE(oversized.next());
  CHECK(oversized.error().find("limit") != std::string::npos);
  oversized.feed(encode_frame(MessageType::kBye, ""));
  CHECK_FALSE(oversized.next());  // stays broken

  FrameReader empty;
  empty.feed(std::string("\x00\x00\x00\x00", 4));
  CHECK_FALSE(empty.next());
  CHECK(empty.error() == "a frame without a type");

  FrameReader unknown;
  unknown.feed(std::string("\x00\x00\x00\x01\x63", 5));
  CHECK_FALSE(unknown.next());
  CHECK(unknown.error() == "a frame of unknown type 99");

  CHECK_THROWS_AS(encode_frame(MessageType::kRecords, std::string(kMaxFrameBytes, 'r')), std::length_error);
}

TEST_CASE("agent link: 2,000 random byte streams never crash the reader", "[agent-link]") {
  std::mt19937_64 rng(11);
  for (int i = 0; i < 2000; ++i) {
    std::string bytes(rng() % 64, '\0');
    for (auto& c : bytes) c = static_cast<char>(rng() % 256);
    FrameReader reader;
    reader.feed(bytes);
    while (auto f = reader.next()) CHECK_FALSE(message_type_name(static_cast<std::uint8_t>(f->type)).empty());
  }
}

TEST_CASE("agent link: HMAC-SHA256 gives RFC 4231's answers", "[agent-link]") {
  CHECK(hmac_sha256_hex("Jefe", "what do ya want for nothing?") ==
        "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843");
  CHECK(hmac_sha256_hex(std::string(20, '\x0b'), "Hi There") ==
        "b0344c61d8db38535ca8afceaf0bf12b881dc200c9833da726e9376c2e32cff7");
}

TEST_CASE("agent link: a proof holds only for its secret, run, role and nonce", "[agent-link]") {
  const auto secret = make_link_secret();
  const auto nonce = make_link_nonce();
  CHECK(secret.size() == 64);
  CHECK(nonce.size() == 32);
  CHECK(make_link_secret() != secret);
  const auto proof = link_proof(secret, "run1", "agent", nonce);
  CHECK(check_link_proof(secret, "run1", "agent", nonce, proof));
  CHECK_FALSE(check_link_proof(make_link_secret(), "run1", "agent", nonce, proof));  // another secret
  CHECK_FALSE(check_link_proof(secret, "run2", "agent", nonce, proof));               // another run
  CHECK_FALSE(check_link_proof(secret, "run1", "controller", nonce, proof));          // reflected
  CHECK_FALSE(check_link_proof(secret, "run1", "agent", make_link_nonce(), proof));   // replayed
  CHECK_FALSE(check_link_proof(secret, "run1", "agent", nonce, proof.substr(1)));
  CHECK_FALSE(check_link_proof(secret, "run1", "agent", nonce, ""));
}

}  // namespace agent_link_test
