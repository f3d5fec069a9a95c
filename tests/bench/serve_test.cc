// The inference server (bench/serve): the batching policy and the request parser as pure
// functions, then the real server in-process on an ephemeral port, driven over sockets by
// a small blocking HTTP/1.1 client.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <catch2/catch.hpp>
#include <condition_variable>
#include <mutex>
#include <nlohmann/json.hpp>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "bench/serve/dynamic_batcher.h"
#include "bench/serve/http_server.h"
#include "bench/serve/infer_request.h"
#include "bench/serve/inference_model.h"
#include "bench/serve/inference_service.h"

namespace serve_test {  // this file's names, apart in a unity batch (tests/CMakeLists.txt)

using namespace chaosbench::bench::serve;
using nlohmann::json;

namespace {

struct Reply {
  int status = 0;  // 0: connection closed or broken
  std::string body;
};

// One keep-alive connection; requests are written whole, responses read by Content-Length.
class Client {
 public:
  explicit Client(unsigned short port) {
    fd_ = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_port = htons(port);
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (::connect(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) throw std::runtime_error("connect");
  }
  ~Client() { ::close(fd_); }
  Client(const Client&) = delete;
  Client& operator=(const Client&) = delete;

  void send(const std::string& method, const std::string& target, const std::string& body = "") {
    std::string req = method + " " + target + " HTTP/1.1\r\nHost: test\r\nContent-Type: application/json\r\n";
    req += "Content-Length: " + std::to_string(body.size()) + "\r\n\r\n" + body;
    std::size_t done = 0;
    while (done < req.size()) {
      const auto n = ::send(fd_, req.data() + done, req.size() - done, MSG_NOSIGNAL);
      if (n <= 0) return;  // the server may answer early (413) and stop reading
      done += static_cast<std::size_t>(n);
    }
  }

  Reply receive() {
    Reply r;
    std::size_t header_end;
    while ((header_end = buffer_.find("\r\n\r\n")) == std::string::npos)
      if (!fill()) return r;
    const std::string head = buffer_.substr(0, header_end);
    r.status = std::stoi(head.substr(9, 3));
    std::size_t length = 0;
    for (const char* key : {"Content-Length: ", "content-length: "})
      if (auto p = head.find(key); p != std::string::npos) length = std::stoul(head.substr(p + 16));
    while (buffer_.size() < header_end + 4 + length)
      if (!fill()) return Reply{};
    r.body = buffer_.substr(header_end + 4, length);
    buffer_.erase(0, header_end + 4 + length);
    return r;
  }

  Reply request(const std::string& method, const std::string& target, const std::string& body = "") {
    send(method, target, body);
    return receive();
  }

 private:
  bool fill() {
    char chunk[65536];
    const auto n = ::recv(fd_, chunk, sizeof chunk, 0);
    if (n <= 0) return false;
    buffer_.append(chunk, static_cast<std::size_t>(n));
    return true;
  }
  int fd_ = -1;
  std::string buffer_;
};

const std::vector<int> kLayers{8, 16, 4};

std::vector<float> random_rows(int rows, std::uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  std::vector<float> x(static_cast<std::size_t>(rows) * 8);
  for (auto& v : x) v = u(rng);
  return x;
}

std::string infer_body(const std::vector<float>& x, int rows, bool nested = false) {
  json data = json::array();
  for (int r = 0; r < rows; ++r) {
    json row = json::array();
    for (int c = 0; c < 8; ++c) (nested ? row : data).push_back(x[static_cast<std::size_t>(r * 8 + c)]);
    if (nested) data.push_back(row);
  }
  return json{{"inputs", {{{"name", "input"}, {"shape", {rows, 8}}, {"datatype", "FP32"}, {"data", data}}}}}.dump();
}

// A model whose infer() blocks until released, to fill the queue.
class BlockingModel final : public InferenceModel {
 public:
  int input_dim() const override { return 8; }
  int output_dim() const override { return 4; }
  int max_batch() const override { return 64; }
  std::string describe() const override { return "blocking stub"; }
  void infer(const float*, int batch, float* y) override {
    std::unique_lock lk(mu_);
    ++entered_;
    cv_.notify_all();
    cv_.wait(lk, [&] { return released_; });
    std::fill(y, y + batch * 4, 1.0f);
  }
  void wait_entered() {
    std::unique_lock lk(mu_);
    cv_.wait(lk, [&] { return entered_ > 0; });
  }
  void release() {
    std::lock_guard lk(mu_);
    released_ = true;
    cv_.notify_all();
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  int entered_ = 0;
  bool released_ = false;
};

struct Served {
  explicit Served(BatcherConfig batching, std::uint64_t body_limit = 4u << 20, InferenceModel* stub = nullptr)
      : model(make_fp32_model(load_weights(kLayers, std::nullopt, 7), 64)),
        service("mlp", stub ? *stub : *model, batching),
        server(HttpServerConfig{"127.0.0.1", 0, 2, body_limit}, service) {}
  std::unique_ptr<InferenceModel> model;
  InferenceService service;
  HttpServer server;
};

BatcherConfig batching(int max_batch, int delay_us, int queue_limit = 1024) {
  BatcherConfig b;
  b.max_batch_size = max_batch;
  b.max_queue_delay = std::chrono::microseconds(delay_us);
  b.queue_limit = queue_limit;
  return b;
}

}  // namespace

TEST_CASE("serve: the batching policy follows Triton's dynamic batcher", "[serve]") {
  auto cfg = batching(8, 1000);
  CHECK(choose_batch({1, 1}, cfg, false) == 0);         // waits for company
  CHECK(choose_batch({1, 1}, cfg, true) == 2);          // delay expired: what is there
  CHECK(choose_batch({4, 4}, cfg, false) == 2);         // full
  CHECK(choose_batch({4, 3, 2}, cfg, false) == 2);      // the next would not fit
  cfg.preferred_batch_sizes = {2, 4};
  CHECK(choose_batch({1, 1, 1}, cfg, false) == 0);      // 3 rows: below the largest preferred
  CHECK(choose_batch({1, 1, 1, 1, 1}, cfg, false) == 4);  // cut at the preferred 4
  CHECK(choose_batch({3, 3}, cfg, false) == 2);         // no preferred boundary: the prefix
  CHECK(choose_batch({1}, batching(8, 0), false) == 1);  // no delay: at once
}

TEST_CASE("serve: parse_infer_request accepts flat and nested data and names what is wrong", "[serve]") {
  const auto x = random_rows(2, 1);
  auto flat = parse_infer_request(infer_body(x, 2), 8, 4);
  REQUIRE(flat.ok);
  CHECK(flat.request.rows == 2);
  CHECK(flat.request.data == x);
  auto nested = parse_infer_request(infer_body(x, 2, true), 8, 4);
  REQUIRE(nested.ok);
  CHECK(nested.request.data == x);

  auto bad = [](const std::string& body) {
    auto p = parse_infer_request(body, 8, 4);
    CHECK_FALSE(p.ok);
    CHECK_FALSE(p.error.empty());
    return p.error;
  };
  CHECK_THAT(bad("{\"inputs\": ["), Catch::StartsWith("malformed JSON"));
  auto j = json::parse(infer_body(x, 2));
  auto with = [&](const char* key, json v) {
    auto k = j;
    k["inputs"][0][key] = std::move(v);
    return k.dump();
  };
  CHECK_THAT(bad(with("datatype", "INT8")), Catch::Contains("FP32"));
  CHECK_THAT(bad(with("shape", {2, 7})), Catch::Contains("[n, 8]"));
  CHECK_THAT(bad(with("shape", {5, 8})), Catch::Contains("max_batch_size"));
  CHECK_THAT(bad(with("shape", {0, 8})), Catch::Contains("at least 1"));
  CHECK_THAT(bad(with("shape", {3, 8})), Catch::Contains("needs 24"));
  auto strings = json::array();
  for (int i = 0; i < 16; ++i) strings.push_back(i == 5 ? json("a") : json(1.0));
  CHECK_THAT(bad(with("data", strings)), Catch::Contains("expected numbers, got string"));
  CHECK_THAT(bad(with("data", json::array({json::array({1, 2}), json::array({3})}))), Catch::Contains("every row"));
  CHECK_THAT(bad(with("data", json::array({json::array({1}), json::array({3}), json::array({4})}))),
             Catch::Contains("3 rows, shape says 2"));
  CHECK_THAT(bad(R"({"inputs":[{"name":"input","shape":[1,8],"datatype":"FP32","data":[1e300,0,0,0,0,0,0,0]}]})"),
             Catch::Contains("FP32 range"));
  CHECK_THAT(bad("[]"), Catch::Contains("object"));
  CHECK_THAT(bad("{}"), Catch::Contains("inputs"));
}

TEST_CASE("serve: fuzzed request bodies never break the parser", "[serve]") {
  std::mt19937 rng(20261130);
  const std::string valid = infer_body(random_rows(2, 2), 2);
  const std::string nested_valid = infer_body(random_rows(2, 3), 2, true);
  const std::vector<std::string> junk{"{", "}", "[", "]", ",", ":", "\"", "null", "true", "-", "1e999999", "9999999999999999999999",
                                      "\"FP32\"", "\"shape\"", "-1", "\\u0000", "\xff", "NaN"};
  int accepted = 0;
  for (int i = 0; i < 2000; ++i) {
    std::string body = i % 2 ? valid : nested_valid;
    const int edits = 1 + static_cast<int>(rng() % 4);
    for (int e = 0; e < edits && !body.empty(); ++e) {
      const std::size_t at = rng() % body.size();
      switch (rng() % 5) {
        case 0: body.resize(at); break;                                  // truncation
        case 1: body[at] = static_cast<char>(rng() % 256); break;        // random byte
        case 2: body.insert(at, junk[rng() % junk.size()]); break;       // wrong types, huge numbers
        case 3: body.insert(at, std::string(1 + rng() % 3000, "[{"[rng() % 2])); break;  // deep nesting
        default: body.erase(at, 1 + rng() % 8); break;
      }
    }
    auto p = parse_infer_request(body, 8, 4);
    if (p.ok) {
      ++accepted;
      CHECK(p.request.data.size() == static_cast<std::size_t>(p.request.rows) * 8);
    } else {
      CHECK_FALSE(p.error.empty());
    }
  }
  INFO("accepted " << accepted << " of 2000");
  CHECK(accepted < 2000);
}

TEST_CASE("serve: health, metadata and infer over HTTP match the model", "[serve]") {
  Served s(batching(16, 500));
  Client c(s.server.port());
  CHECK(c.request("GET", "/v2/health/live").status == 200);
  auto ready = c.request("GET", "/v2/health/ready");
  CHECK(ready.status == 200);
  CHECK(json::parse(ready.body)["ready"] == true);
  auto meta = c.request("GET", "/v2/models/mlp");
  REQUIRE(meta.status == 200);
  auto m = json::parse(meta.body);
  CHECK(m["name"] == "mlp");
  CHECK(m["inputs"][0]["datatype"] == "FP32");
  CHECK(m["inputs"][0]["shape"] == json::array({-1, 8}));
  CHECK(m["outputs"][0]["shape"] == json::array({-1, 4}));
  CHECK(c.request("GET", "/v2/models/other").status == 404);

  auto reference = make_fp32_model(load_weights(kLayers, std::nullopt, 7), 64);
  for (bool nested : {false, true}) {
    const auto x = random_rows(3, nested ? 5 : 6);
    std::vector<float> expected(12);
    reference->infer(x.data(), 3, expected.data());
    auto r = c.request("POST", "/v2/models/mlp/infer", infer_body(x, 3, nested));
    REQUIRE(r.status == 200);
    auto out = json::parse(r.body);
    CHECK(out["model_name"] == "mlp");
    CHECK(out["outputs"][0]["shape"] == json::array({3, 4}));
    CHECK(out["outputs"][0]["datatype"] == "FP32");
    const auto data = out["outputs"][0]["data"].get<std::vector<float>>();
    REQUIRE(data.size() == expected.size());
    for (std::size_t i = 0; i < data.size(); ++i) CHECK(data[i] == Approx(expected[i]).margin(1e-6));
  }
}

TEST_CASE("serve: bad requests get 400, 404 or 413 with a message and the connection survives", "[serve]") {
  Served s(batching(4, 0), 64 * 1024);
  Client c(s.server.port());
  const auto x = random_rows(5, 9);
  for (const auto& body : {std::string("{not json"), infer_body(x, 5) /* 5 rows > max batch 4 */,
                           std::string(R"({"inputs":[{"name":"input","shape":[1,3],"datatype":"FP32","data":[1,2,3]}]})"),
                           std::string(R"({"inputs":[{"name":"input","shape":[1,8],"datatype":"INT64","data":[1,2,3,4,5,6,7,8]}]})")}) {
    auto r = c.request("POST", "/v2/models/mlp/infer", body);
    CHECK(r.status == 400);
    CHECK_FALSE(json::parse(r.body)["error"].get<std::string>().empty());
  }
  CHECK(c.request("POST", "/v2/models/nope/infer", infer_body(x, 1)).status == 404);
  CHECK(c.request("GET", "/v2/models/mlp/infer").status == 405);
  CHECK(c.request("POST", "/v2/models/mlp/infer", infer_body(x, 1)).status == 200);  // still alive

  Client big(s.server.port());
  auto r = big.request("POST", "/v2/models/mlp/infer", std::string(100 * 1024, ' '));
  CHECK(r.status == 413);
  CHECK_THAT(r.body, Catch::Contains("limit"));
  CHECK(s.service.metrics().requests(413) == 1);
}

TEST_CASE("serve: past the queue limit the server answers 503 at once", "[serve]") {
  BlockingModel stub;
  Served s(batching(1, 0, 2), 4u << 20, &stub);
  struct Release {  // before `s` stops: a failed REQUIRE must not leave the batcher blocked
    BlockingModel& m;
    ~Release() { m.release(); }
  } release{stub};
  const auto body = infer_body(random_rows(1, 4), 1);
  Client first(s.server.port());
  first.send("POST", "/v2/models/mlp/infer", body);
  stub.wait_entered();  // the batcher holds it; the queue is empty again
  Client second(s.server.port()), third(s.server.port());
  second.send("POST", "/v2/models/mlp/infer", body);
  third.send("POST", "/v2/models/mlp/infer", body);
  for (int i = 0; i < 500 && s.service.queue_depth() < 2; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(2));
  REQUIRE(s.service.queue_depth() == 2);
  Client fourth(s.server.port());
  auto refused = fourth.request("POST", "/v2/models/mlp/infer", body);
  CHECK(refused.status == 503);
  CHECK_THAT(refused.body, Catch::Contains("queue full"));
  stub.release();
  CHECK(first.receive().status == 200);
  CHECK(second.receive().status == 200);
  CHECK(third.receive().status == 200);
  auto metrics = fourth.request("GET", "/metrics");
  CHECK(metrics.status == 200);
  CHECK_THAT(metrics.body, Catch::Contains("chaosbench_infer_requests_total{code=\"503\"} 1"));
  CHECK_THAT(metrics.body, Catch::Contains("chaosbench_infer_requests_total{code=\"200\"} 3"));
  CHECK_THAT(metrics.body, Catch::Contains("chaosbench_infer_request_duration_seconds_bucket{le=\"+Inf\"}"));
  CHECK_THAT(metrics.body, Catch::Contains("chaosbench_infer_batch_size_bucket{le=\"1\"} 3"));
  CHECK_THAT(metrics.body, Catch::Contains("chaosbench_infer_queue_depth 0"));
}

TEST_CASE("serve: concurrent single-row requests are batched together", "[serve]") {
  Served s(batching(64, 20000));
  std::vector<std::thread> clients;
  std::atomic<int> ok{0};
  for (int i = 0; i < 32; ++i)
    clients.emplace_back([&, i] {
      Client c(s.server.port());
      if (c.request("POST", "/v2/models/mlp/infer", infer_body(random_rows(1, 100 + i), 1)).status == 200) ++ok;
    });
  for (auto& t : clients) t.join();
  CHECK(ok == 32);
  INFO("batches: " << s.service.metrics().batches());
  CHECK(s.service.metrics().batched_requests() == 32);
  CHECK(s.service.metrics().batches() < 32);  // some batch held more than one request
  const auto samples = s.service.metrics().drain_samples();
  CHECK(std::count_if(samples.begin(), samples.end(), [](const HarnessSample& h) {
          return std::string(h.name) == "infer/queue_time";
        }) == 32);
}

TEST_CASE("serve: fuzzed bodies over the socket get 200, 400 or 413 and never crash it", "[serve]") {
  Served s(batching(8, 0), 16 * 1024);
  std::mt19937 rng(7);
  const std::string valid = infer_body(random_rows(2, 8), 2);
  auto c = std::make_unique<Client>(s.server.port());
  int counts[600] = {};
  for (int i = 0; i < 200; ++i) {
    std::string body = valid;
    const std::size_t at = rng() % body.size();
    switch (i % 4) {
      case 0: body.resize(at); break;
      case 1: body[at] = static_cast<char>(rng() % 256); break;
      case 2: body.insert(at, std::string(rng() % 40000, '[')); break;
      default: body.insert(at, "1e999,"); break;
    }
    auto r = c->request("POST", "/v2/models/mlp/infer", body);
    REQUIRE((r.status == 200 || r.status == 400 || r.status == 413));
    ++counts[r.status];
    if (r.status == 413) c = std::make_unique<Client>(s.server.port());  // the server closed it
  }
  INFO("200: " << counts[200] << ", 400: " << counts[400] << ", 413: " << counts[413]);
  CHECK(counts[400] > 0);
  CHECK(Client(s.server.port()).request("GET", "/v2/health/live").status == 200);
}

}  // namespace serve_test
