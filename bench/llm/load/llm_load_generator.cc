#include "bench/llm/load/llm_load_generator.h"

#include <algorithm>
#include <cmath>
#include <random>
#include <stdexcept>

#include "bench/llm/load/llm_exchange.h"
#include "bench/llm/load/llm_load_recorder.h"
#include "bench/llm/load/llm_request_builder.h"
#include "bench/openloop/open_loop_engine.h"

namespace chaosbench::bench::llm {
namespace {

using Clock = std::chrono::steady_clock;
constexpr auto kWarmUpLimit = std::chrono::seconds(2);

Clock::duration to_clock(std::chrono::nanoseconds d) { return std::chrono::duration_cast<Clock::duration>(d); }

// The engine as the generator's settings want it: a connection per stream, the timeout
// from the scheduled time, every endpoint tried on connect failures, a stop that cancels.
openloop::OpenLoopOptions engine_options(const LlmLoadPlan& plan, const std::atomic<bool>& stop) {
  openloop::OpenLoopOptions o;
  o.endpoints = plan.endpoints;
  o.timeout = plan.settings.timeout.value;
  o.stop = &stop;
  o.stop_cancels = true;
  o.limits.max_body = 64ull << 20;  // a whole (not streamed) answer is kept: bounded
  return o;
}

std::unique_ptr<openloop::OpenLoopEngine> make_engine(const LlmLoadPlan& plan, const std::atomic<bool>& stop) {
  try {
    return std::make_unique<openloop::OpenLoopEngine>(engine_options(plan, stop));
  } catch (const std::runtime_error& e) {
    throw std::runtime_error(std::string("llm-load: ") + e.what());
  }
}

}  // namespace

// The generator's side of the engine: the arrival process, the prompts, the recorder.
struct LlmLoadGenerator::Loop final : openloop::OpenLoopClient {
  Loop(LlmLoadPlan plan, MetricsClient& metrics, const std::atomic<bool>& stop);
  LlmLoadResult run();
  Clock::time_point issue(openloop::OpenLoopEngine& engine, Clock::time_point now) override;
  void tick(Clock::time_point now) override { recorder->tick(now); }

  LlmRequest next_request();
  void begin(openloop::OpenLoopEngine& engine, Clock::time_point scheduled, Clock::time_point now);
  std::size_t warm_up_connections() const;

  LlmLoadPlan plan;
  const LlmLoadSettings& s;
  MetricsClient& metrics;
  std::vector<LlmRequestShape> shapes;  // per endpoint: its Host header
  std::unique_ptr<SyntheticDataset> synthetic;
  std::size_t next_prompt = 0;
  std::unique_ptr<openloop::OpenLoopEngine> engine;
  std::mt19937_64 rng;
  std::exponential_distribution<double> gap;
  Clock::time_point end_issue, next_arrival;
  std::unique_ptr<LlmMetricsQueue> queue;  // during run(): the MetricsClient's only user
  std::unique_ptr<LlmLoadRecorder> recorder;
};

LlmLoadGenerator::Loop::Loop(LlmLoadPlan p, MetricsClient& m, const std::atomic<bool>& stop)
    : plan(std::move(p)), s(plan.settings), metrics(m), rng(plan.seed), gap(plan.settings.rate) {
  if (plan.endpoints.empty()) throw std::runtime_error("llm-load: no endpoint");
  for (const auto& e : plan.endpoints) shapes.push_back({s.api, s.stream, s.ignore_eos, plan.model, e.text()});
  if (plan.prompts.empty()) synthetic = std::make_unique<SyntheticDataset>(s.input, s.output, plan.seed);
  engine = make_engine(plan, stop);
}

LlmRequest LlmLoadGenerator::Loop::next_request() {
  if (synthetic) return synthetic->next();
  const auto& r = plan.prompts[next_prompt];
  next_prompt = (next_prompt + 1) % plan.prompts.size();
  return r;
}

void LlmLoadGenerator::Loop::begin(openloop::OpenLoopEngine& e, Clock::time_point scheduled, Clock::time_point now) {
  recorder->issued();
  LlmRequest request = next_request();
  if (s.arrival != Arrival::kConcurrency && e.outstanding() >= s.max_in_flight) {
    StreamTimeline timeline(scheduled, request.input_tokens);
    timeline.fail(now, StreamFailure::kRejected, "max_in_flight requests were in flight");
    return recorder->finished(timeline.timing(), now);
  }
  e.submit(std::make_unique<LlmExchange>(scheduled, std::move(request), shapes, *recorder), now);
}

Clock::time_point LlmLoadGenerator::Loop::issue(openloop::OpenLoopEngine& e, Clock::time_point now) {
  if (s.arrival == Arrival::kConcurrency) {
    // At most `concurrency` starts a turn: requests failing at once must not spin here.
    for (int started = 0; e.outstanding() < s.concurrency && started < s.concurrency; ++started) begin(e, now, now);
    return Clock::time_point::max();
  }
  while (next_arrival <= now && next_arrival < end_issue) {
    begin(e, next_arrival, now);
    const double seconds = s.arrival == Arrival::kPoisson ? gap(rng) : 1.0 / s.rate;
    next_arrival += to_clock(std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::duration<double>(seconds)));
  }
  return next_arrival;  // past end_issue too: the engine wakes then and ends issuing on time
}

// The connections the first requests take, opened before the clock starts so the first
// TTFTs do not include TCP handshakes: closed loop, one per stream; open loop, a second's
// worth (at most max_in_flight).
std::size_t LlmLoadGenerator::Loop::warm_up_connections() const {
  const double wanted =
      s.arrival == Arrival::kConcurrency ? s.concurrency : std::min<double>(s.max_in_flight, std::ceil(s.rate));
  return static_cast<std::size_t>(std::min(wanted, 4096.0));
}

LlmLoadResult LlmLoadGenerator::Loop::run() {
  engine->warm_up(warm_up_connections(), kWarmUpLimit);
  const auto start = Clock::now();
  queue = std::make_unique<LlmMetricsQueue>(metrics);
  recorder = std::make_unique<LlmLoadRecorder>(
      *queue, LlmRecorderOptions{s.slo, s.stream, s.window.value, plan.itl_budget_per_s, plan.seed, plan.send_samples},
      start);
  end_issue = start + to_clock(s.duration.value);
  next_arrival = start;
  engine->run(*this, end_issue);
  auto result = recorder->finish(Clock::now());
  result.failovers = engine->failovers();
  recorder.reset();
  queue.reset();  // writes what is queued and joins: the caller has its MetricsClient back
  return result;
}

LlmLoadGenerator::LlmLoadGenerator(LlmLoadPlan plan, MetricsClient& metrics, const std::atomic<bool>& stop)
    : loop_(std::make_unique<Loop>(std::move(plan), metrics, stop)) {}

LlmLoadGenerator::~LlmLoadGenerator() = default;

LlmLoadResult LlmLoadGenerator::run() { return loop_->run(); }

}  // namespace chaosbench::bench::llm
