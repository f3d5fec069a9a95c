// The controller's rendezvous store ("tcp:" stores): the server, its client, and gloo's
// store over them. Everything on loopback in this process.
#include <catch2/catch.hpp>

#include <atomic>
#include <cstdlib>
#include <thread>

#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include "bench/rendezvous/rendezvous.h"
#include "bench/rendezvous/tcp_store_client.h"
#include "common/json/store_wire.h"
#include "harness/site/rendezvous_server.h"

namespace rendezvous_store_test {  // this file's names, apart in a unity batch (tests/CMakeLists.txt)

using chaosbench::bench::TcpStoreClient;
using chaosbench::harness::RendezvousServer;
namespace wire = chaosbench::common::store_wire;
using namespace std::chrono_literals;

namespace {

constexpr const char* kToken = "0123456789abcdef";

int raw_connect(int port) {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<std::uint16_t>(port));
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  REQUIRE(::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0);
  return fd;
}

// Whether the server closed `fd` (a read sees the end) within a second.
bool closed_by_server(int fd) {
  timeval tv{1, 0};
  ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  char buf[256];
  ssize_t n;
  while ((n = ::read(fd, buf, sizeof buf)) > 0) {
  }
  return n == 0;
}

}  // namespace

TEST_CASE("rendezvous store: set, get, wait, and their timeouts", "[store]") {
  RendezvousServer server(kToken);
  TcpStoreClient a("127.0.0.1", server.port(), kToken);
  TcpStoreClient b("127.0.0.1", server.port(), kToken);
  a.set("k", std::string("v\0w", 3));
  CHECK(b.get("k", 0ms) == std::string("v\0w", 3));
  CHECK_FALSE(b.get("missing", 0ms));

  auto start = std::chrono::steady_clock::now();
  CHECK_FALSE(b.get("missing", 200ms));
  CHECK_FALSE(b.wait({"k", "missing"}, 200ms));
  const auto waited = std::chrono::steady_clock::now() - start;
  CHECK(waited >= 400ms);
  CHECK(waited < 2s);

  // A get blocks until another client sets the key.
  std::thread setter([&] {
    std::this_thread::sleep_for(100ms);
    a.set("late", "here");
  });
  CHECK(b.get("late", 5s) == "here");
  setter.join();
  CHECK(b.wait({"k", "late"}, 0ms));

  CHECK(a.add_once("once", "first") == "first");
  CHECK(b.add_once("once", "second") == "first");
  b.remove("once");
  CHECK_FALSE(a.get("once", 0ms));
  a.set("dir/1", "x");
  a.set("dir/2", "y");
  a.set("dirt", "z");
  CHECK(b.list("dir/") == std::map<std::string, std::string>{{"dir/1", "x"}, {"dir/2", "y"}});
}

TEST_CASE("rendezvous store: a wrong token is refused, and others are still served", "[store]") {
  RendezvousServer server(kToken);
  CHECK_THROWS_WITH(TcpStoreClient("127.0.0.1", server.port(), "0123456789abcdeX"), Catch::Contains("token"));
  CHECK_THROWS_WITH(TcpStoreClient("127.0.0.1", server.port(), ""), Catch::Contains("token"));
  // A request before the token is no token either.
  const int fd = raw_connect(server.port());
  wire::write_all(fd, wire::encode({static_cast<std::uint8_t>(wire::Op::kSet), {"k", "v"}}));
  CHECK(closed_by_server(fd));
  ::close(fd);
  TcpStoreClient good("127.0.0.1", server.port(), kToken);
  CHECK_FALSE(good.get("k", 0ms));
  CHECK(server.dropped() >= 3);
}

TEST_CASE("rendezvous store: oversize keys and values and a full store are refused", "[store]") {
  RendezvousServer::Limits limits;
  limits.max_keys = 3;
  RendezvousServer server(kToken, limits);
  TcpStoreClient c("127.0.0.1", server.port(), kToken);
  CHECK_THROWS_WITH(c.set(std::string(wire::kMaxKey + 1, 'k'), "v"), Catch::Contains("exceeds"));
  CHECK_THROWS_WITH(c.set("k", std::string(wire::kMaxValue + 1, 'v')), Catch::Contains("exceeds"));
  c.set("big", std::string(wire::kMaxValue, 'v'));  // the limit itself is fine
  c.set("a", "1");
  c.set("b", "2");
  CHECK_THROWS_WITH(c.set("c", "3"), Catch::Contains("limit"));
  c.set("a", "replaced");  // an existing key is no new one
  CHECK(c.get("a", 0ms) == "replaced");
  CHECK(c.get("big", 0ms)->size() == wire::kMaxValue);

  // A frame longer than any request could be: the connection goes, the server stays.
  const int fd = raw_connect(server.port());
  wire::write_all(fd, wire::encode({static_cast<std::uint8_t>(wire::Op::kHello), {kToken}}));
  wire::write_all(fd, std::string("\xff\xff\xff\xff", 4));
  CHECK(closed_by_server(fd));
  ::close(fd);
  CHECK(c.get("b", 0ms) == "2");
}

TEST_CASE("rendezvous store: a client that disconnects mid-request or sends garbage harms no other", "[store]") {
  RendezvousServer server(kToken);
  TcpStoreClient c("127.0.0.1", server.port(), kToken);
  for (int i = 0; i < 20; ++i) {
    const int fd = raw_connect(server.port());
    wire::write_all(fd, wire::encode({static_cast<std::uint8_t>(wire::Op::kHello), {kToken}}));
    if (i % 4 == 0) wire::write_all(fd, std::string("\0\0\0\x64partial", 11));  // 100 bytes promised
    if (i % 4 == 1) wire::write_all(fd, wire::encode({99, {"x"}}));             // an unknown op
    if (i % 4 == 2) wire::write_all(fd, std::string("\0\0\0\x05\x02\0\0\xff\xff", 9));  // a field past the end
    if (i % 4 == 3) wire::write_all(fd, wire::encode({static_cast<std::uint8_t>(wire::Op::kGet), {"k", "10000"}}));
    ::close(fd);  // the blocked get's reader is gone
  }
  c.set("k", "v");
  CHECK(c.get("k", 0ms) == "v");
  std::this_thread::sleep_for(100ms);
  CHECK(server.dropped() >= 15);
}

TEST_CASE("rendezvous store: concurrent clients meet, and stop() ends blocked requests", "[store]") {
  RendezvousServer server(kToken);
  constexpr int kClients = 16;
  std::vector<std::string> keys;
  for (int i = 0; i < kClients; ++i) keys.push_back("rank" + std::to_string(i));
  std::atomic<int> met{0};
  std::vector<std::thread> threads;
  for (int i = 0; i < kClients; ++i)
    threads.emplace_back([&, i] {
      TcpStoreClient c("127.0.0.1", server.port(), kToken);
      c.set(keys[static_cast<std::size_t>(i)], std::to_string(i));
      if (c.wait(keys, 10s) && c.get(keys[static_cast<std::size_t>((i + 1) % kClients)], 0ms)) ++met;
    });
  for (auto& t : threads) t.join();
  CHECK(met == kClients);

  TcpStoreClient blocked("127.0.0.1", server.port(), kToken);
  std::thread stopper([&] {
    std::this_thread::sleep_for(200ms);
    server.stop();
  });
  const auto start = std::chrono::steady_clock::now();
  CHECK_THROWS(blocked.get("never", 60s));
  CHECK(std::chrono::steady_clock::now() - start < 5s);
  stopper.join();
}

TEST_CASE("rendezvous store: make_store(\"tcp:...\") gives gloo a prefixed store", "[store]") {
  RendezvousServer server(kToken);
  const std::string spec = "tcp:127.0.0.1:" + std::to_string(server.port());
  ::unsetenv(wire::kTokenEnv);
  CHECK_THROWS_WITH(chaosbench::bench::make_store(spec, "run1"), Catch::Contains(wire::kTokenEnv));
  ::setenv(wire::kTokenEnv, kToken, 1);
  auto store = chaosbench::bench::make_store(spec, "run1");
  ::unsetenv(wire::kTokenEnv);
  CHECK(store->spec() == spec);
  store->store().set("k", {'x', 'y'});
  CHECK(store->store().get("k") == std::vector<char>{'x', 'y'});
  store->store().wait({"k"}, 100ms);
  CHECK_THROWS(store->store().wait({"absent"}, 100ms));
  TcpStoreClient raw("127.0.0.1", server.port(), kToken);
  CHECK(raw.get("run1/k", 0ms) == "xy");
  CHECK(chaosbench::bench::parse_store_spec(spec).port == server.port());
}

}  // namespace rendezvous_store_test
