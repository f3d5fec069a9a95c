#include <catch2/catch.hpp>

#include <array>
#include <atomic>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <future>
#include <map>
#include <mutex>
#include <string>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <thread>
#include <unistd.h>
#include <vector>

#include "test_util.h"
#include "bench/protocol/metrics_client.h"
#include "bench/protocol/record.h"
#include "harness/collect/metrics_server.h"

namespace metrics_server_test {  // this file's names, apart in a unity batch (tests/CMakeLists.txt)

using chaosbench::harness::MetricsServer;
namespace bench = chaosbench::bench;
namespace fs = std::filesystem;
using namespace std::chrono_literals;

namespace {

using Clock = std::chrono::steady_clock;

// test_util's TempDir, seen as a std::filesystem path.
struct TempDir : chaosbench::test::TempDir {
  fs::path path{chaosbench::test::TempDir::path()};
  std::string socket() const { return (path / "metrics.sock").string(); }
};

// A raw client, for writing exactly the bytes a test needs (MetricsClient only writes
// well-formed lines). Closes on destruction.
struct RawClient {
  int fd = -1;
  explicit RawClient(const std::string& path) {
    fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_un addr{};
    addr.sun_family = AF_UNIX;
    std::memcpy(addr.sun_path, path.data(), path.size());
    if (fd < 0 || ::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0) {
      throw std::runtime_error(std::string("connect: ") + std::strerror(errno));
    }
  }
  ~RawClient() { close(); }
  RawClient(const RawClient&) = delete;
  RawClient& operator=(const RawClient&) = delete;
  void write(std::string_view bytes) const {
    while (!bytes.empty()) {
      ssize_t n = ::send(fd, bytes.data(), bytes.size(), MSG_NOSIGNAL);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) throw std::runtime_error(std::string("send: ") + std::strerror(errno));
      bytes.remove_prefix(static_cast<std::size_t>(n));
    }
  }
  void close() {
    if (fd >= 0) ::close(fd);
    fd = -1;
  }
};

std::string sample_line(int rank, double value, const std::string& name = "test/value") {
  return bench::encode_record(bench::Sample{rank, bench::wall_time_now(), name, value, "count", {}});
}

template <typename Pred>
bool wait_until(Pred pred, std::chrono::milliseconds timeout = 5s) {
  auto deadline = Clock::now() + timeout;
  while (!pred()) {
    if (Clock::now() >= deadline) return false;
    std::this_thread::sleep_for(1ms);
  }
  return true;
}

}  // namespace

TEST_CASE("metrics-server: records from many concurrent clients all arrive, in order",
          "[metrics-server]") {
  TempDir dir;
  constexpr int kRanks = 8;
  constexpr int kPerRank = 1000;
  // Touched only on the server thread until stop() joins it.
  std::map<int, std::vector<double>> values;
  std::map<int, int> done_events;
  double last_received = 0;
  MetricsServer server(dir.socket(), [&](const bench::Record& r, double received_at) {
    last_received = received_at;
    if (const auto* s = std::get_if<bench::Sample>(&r)) {
      values[s->rank].push_back(s->value);
    } else {
      ++done_events[std::get<bench::Event>(r).rank];
    }
  });
  CHECK(server.address() == "unix:" + dir.socket());
  struct stat st {};
  REQUIRE(::stat(dir.socket().c_str(), &st) == 0);
  CHECK(S_ISSOCK(st.st_mode));
  CHECK((st.st_mode & 0777) == 0600);

  std::array<std::atomic<bool>, kRanks> connected{};
  std::vector<std::thread> ranks;
  for (int rank = 0; rank < kRanks; ++rank) {
    ranks.emplace_back([&, rank] {
      bench::MetricsClient client(server.address(), rank);
      connected[rank] = client.connected();
      for (int i = 0; i < kPerRank; ++i) {
        client.sample("test/value", i, "count", {{"i", std::int64_t{i}}});
        if (i % 97 == 0) client.flush();  // many small writes interleave the ranks
      }
      client.event("done", {{"steps", std::int64_t{kPerRank}}});
    });  // the destructor flushes the rest
  }
  for (auto& t : ranks) t.join();
  for (const auto& c : connected) CHECK(c);
  const std::uint64_t expected = kRanks * (kPerRank + 1);
  CHECK(wait_until([&] { return server.records() == expected; }));
  server.stop();

  CHECK(server.records() == expected);
  CHECK(server.malformed() == 0);
  for (int rank = 0; rank < kRanks; ++rank) {
    const auto& v = values[rank];
    REQUIRE(v.size() == kPerRank);
    bool in_order = true;
    for (int i = 0; i < kPerRank; ++i) in_order = in_order && v[i] == i;
    CHECK(in_order);
    CHECK(done_events[rank] == 1);
  }
  CHECK(std::abs(last_received - bench::wall_time_now()) < 60);
  CHECK_FALSE(fs::exists(dir.socket()));  // stop() unlinks it
  server.stop();                          // idempotent
}

TEST_CASE("metrics-server: malformed lines are counted and the first five kept as examples",
          "[metrics-server]") {
  TempDir dir;
  MetricsServer server(dir.socket(), nullptr);
  {
    RawClient first(dir.socket());
    first.write("oops\n");
    REQUIRE(wait_until([&] { return server.malformed() == 1; }));
  }
  RawClient c(dir.socket());
  c.write(sample_line(3, 1.0));                                       // line 1
  c.write("not json\n");                                              // line 2
  c.write("\n  \r\n");                                                // lines 3-4: blank
  c.write("[1,2]\n");                                                 // line 5
  c.write(R"({"type":"sample","rank":3,"name":"x"})" "\n");          // line 6
  c.write("\xff\x01" "bin\n");                                        // line 7
  c.write(R"({"type":"nope","rank":3,"name":"x"})" "\n");            // line 8: past the five
  c.write(sample_line(3, 2.0));                                       // line 9
  c.close();
  REQUIRE(wait_until([&] { return server.records() == 2 && server.malformed() == 6; }));
  server.stop();

  CHECK(server.records() == 2);
  CHECK(server.malformed() == 6);
  auto examples = server.malformed_examples();
  REQUIRE(examples.size() == 5);
  CHECK(examples[0] == "connection 1 line 1: not valid JSON: oops");
  CHECK(examples[1] == "rank 3 line 2: not valid JSON: not json");
  CHECK(examples[2] == "rank 3 line 5: not a JSON object: [1,2]");
  CHECK_THAT(examples[3], Catch::StartsWith("rank 3 line 6: \"value\" must be a finite number: {"));
  CHECK(examples[4] == "rank 3 line 7: not valid JSON: \\xff\\x01bin");
}

TEST_CASE("metrics-server: over-long lines are malformed and skipped up to their newline",
          "[metrics-server]") {
  TempDir dir;
  MetricsServer server(dir.socket(), nullptr);
  const std::string big(1024 * 1024 + 10, 'x');
  {
    RawClient c(dir.socket());
    c.write(big);  // blocks until the server reads; it does so on its own thread
    c.write("\n");
    c.write(sample_line(1, 1.0));
    std::string exactly_limit(1024 * 1024, 'y');  // exactly 1 MiB: allowed, just not JSON
    exactly_limit.push_back('\n');
    c.write(exactly_limit);
  }
  REQUIRE(wait_until([&] { return server.records() == 1 && server.malformed() == 2; }));
  {
    RawClient c(dir.socket());
    c.write(sample_line(2, 1.0));
    c.write(big);  // over-long and never finished: counted once
  }
  REQUIRE(wait_until([&] { return server.records() == 2 && server.malformed() == 3; }));
  server.stop();
  CHECK(server.records() == 2);
  CHECK(server.malformed() == 3);
  auto examples = server.malformed_examples();
  REQUIRE(examples.size() == 3);
  std::string expected = "connection 1 line 1: line longer than 1 MiB: ";
  expected.append(200, 'x');  // the first 200 bytes
  CHECK(examples[0] == expected);
  CHECK_THAT(examples[1], Catch::StartsWith("rank 1 line 3: not valid JSON: yyyy"));
  CHECK(examples[1].size() < 300);
  CHECK_THAT(examples[2], Catch::StartsWith("rank 2 line 2: line longer than 1 MiB: xxxx"));
}

TEST_CASE("metrics-server: a last line without newline counts, a cut-off line is malformed",
          "[metrics-server]") {
  TempDir dir;
  std::vector<double> values;
  MetricsServer server(dir.socket(), [&](const bench::Record& r, double) {
    values.push_back(std::get<bench::Sample>(r).value);
  });
  {
    RawClient c(dir.socket());
    std::string line = sample_line(0, 1.0);
    line.pop_back();  // no newline: still a whole record at EOF
    c.write(line);
  }
  REQUIRE(wait_until([&] { return server.records() == 1; }));
  {
    // A rank that dies mid-write: what came before is delivered, the stub is malformed.
    RawClient c(dir.socket());
    std::string line = sample_line(1, 2.0);
    c.write(line + line.substr(0, line.size() / 2));
  }
  REQUIRE(wait_until([&] { return server.records() == 2 && server.malformed() == 1; }));
  server.stop();
  CHECK(values == std::vector<double>{1.0, 2.0});
  REQUIRE(server.malformed_examples().size() == 1);
  CHECK_THAT(server.malformed_examples()[0], Catch::StartsWith("rank 1 line 2: not valid JSON: {"));
}

TEST_CASE("metrics-server: stop() delivers what clients wrote before it", "[metrics-server]") {
  TempDir dir;
  std::atomic<bool> in_handler{false};
  std::atomic<int> seen{0};
  MetricsServer server(dir.socket(), [&](const bench::Record&, double) {
    if (seen++ == 0) {
      // Holds the server thread so that what follows is still unread when stop() comes.
      in_handler = true;
      std::this_thread::sleep_for(300ms);
    }
  });
  RawClient first(dir.socket());
  first.write(sample_line(0, 1.0));
  REQUIRE(wait_until([&] { return in_handler.load(); }));
  RawClient second(dir.socket());  // not even accepted yet
  std::string batch;
  for (int i = 0; i < 100; ++i) batch += sample_line(1, i);
  second.write(batch);  // fits in the socket buffer
  auto t0 = Clock::now();
  server.stop(0ms);  // both clients stay connected
  CHECK(Clock::now() - t0 < 2s);
  CHECK(server.records() == 101);
  CHECK(seen == 101);
}

TEST_CASE("metrics-server: stop() waits until connections have been idle for drain_idle",
          "[metrics-server]") {
  TempDir dir;
  MetricsServer server(dir.socket(), nullptr);
  std::promise<void> release;
  std::thread rank([&, done = release.get_future()]() mutable {
    bench::MetricsClient client(server.address(), 4);
    client.sample("test/value", 1, "count");
    client.flush();
    std::this_thread::sleep_for(150ms);
    client.sample("test/value", 2, "count");
    client.flush();
    done.wait();  // stays connected and silent
  });
  REQUIRE(wait_until([&] { return server.records() == 1; }));
  auto t0 = Clock::now();
  server.stop(600ms);
  auto elapsed = Clock::now() - t0;
  release.set_value();
  rank.join();
  CHECK(server.records() == 2);  // written 150 ms in, within the idle window
  CHECK(elapsed >= 500ms);       // it did wait for the idle window after the last record
  CHECK(elapsed < 3s);           // an idle open connection does not hold it
}

TEST_CASE("metrics-server: a throwing record handler does not stop the server",
          "[metrics-server]") {
  TempDir dir;
  int calls = 0;
  MetricsServer server(dir.socket(), [&](const bench::Record&, double) {
    if (++calls == 1) throw std::runtime_error("handler bug");
  });
  {
    RawClient c(dir.socket());
    c.write(sample_line(0, 1.0) + sample_line(0, 2.0));
  }
  REQUIRE(wait_until([&] { return server.records() == 2; }));
  server.stop();
  CHECK(calls == 2);
  CHECK(server.malformed() == 0);
}

TEST_CASE("metrics-server: binding fails clearly when the path exists or is too long",
          "[metrics-server]") {
  TempDir dir;
  std::ofstream(dir.socket()) << "someone else's file\n";
  CHECK_THROWS_WITH(MetricsServer(dir.socket(), nullptr),
                    Catch::Contains(dir.socket()) && Catch::Contains("Address already in use"));
  CHECK(fs::exists(dir.socket()));  // not ours: left alone
  std::string long_path = (dir.path / std::string(200, 'a')).string();
  CHECK_THROWS_WITH(MetricsServer(long_path, nullptr), Catch::Contains("must be 1 to 107 bytes"));
}

TEST_CASE("metrics-server: a rank's records past its cap are dropped as malformed, reconnecting or not",
          "[metrics-server]") {
  TempDir dir;
  MetricsServer server(dir.socket(), nullptr, 100);
  for (int part = 0; part < 3; ++part) {  // 3 connections of 50: a new one brings no new allowance
    RawClient c(dir.socket());
    std::string lines;
    for (int i = 0; i < 50; ++i) lines += sample_line(1, i);
    c.write(lines);
    c.close();
  }
  REQUIRE(wait_until([&] { return server.records() + server.malformed() == 150; }));
  server.stop();
  CHECK(server.records() == 100);
  CHECK(server.malformed() == 50);
  REQUIRE_FALSE(server.malformed_examples().empty());
  CHECK_THAT(server.malformed_examples()[0], Catch::Contains("over 100 records from rank 1"));
}

TEST_CASE("metrics-server: uint64 labels are never wrapped and ranks are bounded", "[metrics-server]") {
  auto decode = [](const std::string& line) { return bench::decode_record(line); };
  const auto big = decode(R"({"type":"sample","rank":0,"name":"x","value":1,"labels":{"bytes":18446744073709551615}})");
  CHECK_FALSE(big.ok);
  CHECK_THAT(big.error, Catch::Contains("labels.bytes"));
  const auto max = decode(R"({"type":"sample","rank":0,"name":"x","value":1,"labels":{"bytes":9223372036854775807}})");
  REQUIRE(max.ok);
  CHECK(std::get<std::int64_t>(std::get<bench::Sample>(max.record).labels.at("bytes")) == INT64_MAX);
  for (const char* rank : {"1048576", "2147483647", "18446744073709551615", "-1"}) {
    const auto r = decode(std::string(R"({"type":"event","name":"step","rank":)") + rank + "}");
    INFO(rank);
    CHECK_FALSE(r.ok);
    CHECK_THAT(r.error, Catch::Contains("\"rank\""));
  }
  CHECK(decode(R"({"type":"event","name":"step","rank":1048575})").ok);
}

TEST_CASE("metrics-server: a relay hands on every non-blank line as it came, the malformed too", "[metrics-server]") {
  TempDir dir;
  std::mutex m;
  std::vector<std::string> lines;
  auto server = MetricsServer::relay(dir.socket(), [&](std::string_view line, double) {
    std::lock_guard lock(m);
    lines.emplace_back(line);
  });
  {
    RawClient c(dir.socket());
    c.write("{\"type\":\"event\",\"rank\":3,\"time\":1,\"name\":\"step\",\"fields\":{\"step\":1}}\n\n   \nnot json\r\npart");
  }
  server->stop();
  REQUIRE(lines.size() == 3);
  CHECK(lines[0] == "{\"type\":\"event\",\"rank\":3,\"time\":1,\"name\":\"step\",\"fields\":{\"step\":1}}");
  CHECK(lines[1] == "not json\r");  // judged by the decoder it is relayed to, not here
  CHECK(lines[2] == "part");        // a last line without newline, at EOF
  CHECK(server->records() == 3);
  CHECK(server->malformed() == 0);
}

}  // namespace metrics_server_test
