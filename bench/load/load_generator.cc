#include "bench/load/load_generator.h"

#include <random>
#include <stdexcept>

#include "bench/load/load_recorder.h"
#include "bench/load/request_builder.h"
#include "bench/openloop/open_loop_engine.h"

namespace chaosbench::bench::load {
namespace {

using Clock = std::chrono::steady_clock;

// The engine as the scenarios want it: a fixed pool per endpoint, each attempt timed out
// on its own, one failover, the drain bounded by two timeouts, a stop that drains.
openloop::OpenLoopOptions engine_options(const LoadConfig& config, const std::atomic<bool>& stop) {
  openloop::OpenLoopOptions o;
  o.endpoints = config.endpoints;
  o.connections_per_endpoint = config.connections;
  o.timeout = config.timeout;
  o.timeout_per_attempt = true;
  o.max_attempts = 2;
  o.drain_limit = 2 * config.timeout + std::chrono::milliseconds(100);
  o.stop = &stop;
  o.limits.max_body = 1ull << 30;  // no inference answer is near this: a broken server
  return o;
}

// The prepared requests of each endpoint (its Host header), sent in turn.
class RequestVariants {
 public:
  explicit RequestVariants(std::vector<std::vector<std::string>> requests)
      : requests_(std::move(requests)), next_(requests_.size(), 0) {}
  std::string_view next(std::size_t endpoint) {
    const auto& variants = requests_[endpoint];
    auto& i = next_[endpoint];
    const std::string& request = variants[i];
    i = (i + 1) % variants.size();
    return request;
  }

 private:
  std::vector<std::vector<std::string>> requests_;
  std::vector<std::size_t> next_;
};

// One request: a 2xx or 3xx answer completes it, a 4xx fails it, and a 5xx, a lost
// connection or a timeout sends it to the next endpoint while the engine allows (each
// attempt's trouble counted), else fails it.
class InferExchange final : public openloop::OpenLoopExchange {
 public:
  InferExchange(Clock::time_point scheduled, RequestVariants& variants, LoadRecorder& recorder)
      : OpenLoopExchange(scheduled), variants_(variants), recorder_(recorder) {}

  std::string_view request(std::size_t endpoint) override { return variants_.next(endpoint); }
  bool on_complete(const http::HttpResponseReader& response, bool can_fail_over, Clock::time_point) override {
    ok_ = response.status() < 400;
    if (response.status() < 500) return false;
    ++recorder_.counters().http_errors;
    return can_fail_over;
  }
  bool on_failure(Failure failure, std::string_view, bool can_fail_over, Clock::time_point) override {
    ok_ = false;
    auto& counters = recorder_.counters();
    ++(failure == Failure::kTimeout || failure == Failure::kCancelled ? counters.timeouts : counters.connect_errors);
    return can_fail_over;
  }
  void on_end(Clock::time_point at) override {
    if (ok_) recorder_.completed(scheduled(), at);
    else recorder_.failed(scheduled(), at);
  }

 private:
  RequestVariants& variants_;
  LoadRecorder& recorder_;
  bool ok_ = false;
};

}  // namespace

// The generator's side of the engine: the scenario's arrivals and the recorder.
struct LoadGenerator::Loop final : openloop::OpenLoopClient {
  Loop(const LoadConfig& config, MetricsClient& metrics, const std::atomic<bool>& stop);
  LoadResult run();
  Clock::time_point issue(openloop::OpenLoopEngine& engine, Clock::time_point now) override;
  void tick(Clock::time_point now) override { recorder->tick(now); }
  void add(openloop::OpenLoopEngine& engine, Clock::time_point scheduled, Clock::time_point now);

  const LoadConfig& config;
  MetricsClient& metrics;
  openloop::OpenLoopEngine engine;
  RequestVariants variants;
  std::int64_t slots;  // offline: requests kept outstanding (every connection busy)
  std::mt19937_64 rng;
  std::exponential_distribution<double> gap;
  Clock::time_point end_issue, next_arrival;
  std::unique_ptr<LoadRecorder> recorder;
};

LoadGenerator::Loop::Loop(const LoadConfig& cfg, MetricsClient& m, const std::atomic<bool>& stop)
    : config(cfg),
      metrics(m),
      engine(engine_options(cfg, stop)),
      variants(build_requests(cfg)),
      slots(static_cast<std::int64_t>(cfg.connections) * static_cast<std::int64_t>(cfg.endpoints.size())),
      rng(cfg.seed),
      gap(cfg.qps > 0 ? cfg.qps : 1.0) {}

void LoadGenerator::Loop::add(openloop::OpenLoopEngine& e, Clock::time_point scheduled, Clock::time_point now) {
  recorder->issued();
  e.submit(std::make_unique<InferExchange>(scheduled, variants, *recorder), now);
}

Clock::time_point LoadGenerator::Loop::issue(openloop::OpenLoopEngine& e, Clock::time_point now) {
  switch (config.scenario) {
    case LoadScenario::kServer:
      while (next_arrival <= now && next_arrival < end_issue) {
        add(e, next_arrival, now);
        next_arrival += std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(gap(rng)));
      }
      return next_arrival;  // past end_issue too: the engine wakes then and ends issuing on time
    case LoadScenario::kOffline:
      // At most `slots` starts a turn: requests failing at once must not spin here.
      for (std::int64_t started = 0; e.outstanding() < slots && started < slots; ++started) add(e, now, now);
      break;
    case LoadScenario::kSingleStream:
      if (e.outstanding() == 0) add(e, now, now);
      break;
  }
  return Clock::time_point::max();
}

LoadResult LoadGenerator::Loop::run() {
  const auto start = Clock::now();
  recorder = std::make_unique<LoadRecorder>(metrics, start, config.keep_requests, config.window);
  end_issue = start + std::chrono::duration_cast<Clock::duration>(config.duration);
  next_arrival = start;
  engine.run(*this, end_issue);
  recorder->counters().failovers = engine.failovers();
  auto result = recorder->finish(Clock::now());
  result.scenario = to_string(config.scenario);
  result.target_qps = config.scenario == LoadScenario::kServer ? config.qps : 0;
  return result;
}

LoadGenerator::LoadGenerator(LoadConfig config, MetricsClient& metrics) : config_(std::move(config)), metrics_(metrics) {
  if (auto why = load_config_error(config_)) throw std::runtime_error("load generator: " + *why);
  loop_ = std::make_unique<Loop>(config_, metrics_, stop_);
}

LoadGenerator::~LoadGenerator() = default;

LoadResult LoadGenerator::run() { return loop_->run(); }

}  // namespace chaosbench::bench::load
