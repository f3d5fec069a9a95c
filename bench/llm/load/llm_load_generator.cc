#include "bench/llm/load/llm_load_generator.h"

#include <netdb.h>
#include <sys/epoll.h>
#include <sys/timerfd.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <random>
#include <stdexcept>

#include "bench/llm/load/llm_connection.h"
#include "bench/llm/load/llm_load_recorder.h"
#include "bench/llm/load/llm_request_builder.h"

namespace chaosbench::bench::llm {
namespace {

using Clock = std::chrono::steady_clock;
constexpr std::uint32_t kTimerId = 0xffffffffu;
constexpr auto kHousekeeping = std::chrono::milliseconds(5);
constexpr auto kDownFor = std::chrono::seconds(1);
constexpr std::size_t kReadBuffer = 64 * 1024;

Clock::duration to_clock(std::chrono::nanoseconds d) { return std::chrono::duration_cast<Clock::duration>(d); }

// One request until it ends: its scheduled time survives failovers and resends.
struct Attempt {
  LlmRequest request;
  Clock::time_point scheduled, deadline;
  int endpoint = 0;
  std::size_t tried = 1;  // endpoints tried
  bool resent = false;    // resent once after a stale keep-alive close
};

struct Target {
  sockaddr_storage address{};
  socklen_t length = 0;
  std::string host;                // the Host header
  std::vector<std::uint32_t> idle; // connections without a request (open or closed)
  Clock::time_point down_until{};
};

Target resolve_target(const http::HttpClientEndpoint& e) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* found = nullptr;
  const int rc = ::getaddrinfo(e.host.c_str(), std::to_string(e.port).c_str(), &hints, &found);
  if (rc != 0 || found == nullptr) throw std::runtime_error("llm-load: cannot resolve " + e.text() + ": " + ::gai_strerror(rc));
  Target t;
  std::memcpy(&t.address, found->ai_addr, found->ai_addrlen);
  t.length = found->ai_addrlen;
  t.host = e.text();
  ::freeaddrinfo(found);
  return t;
}

}  // namespace

struct LlmLoadGenerator::Loop {
  Loop(LlmLoadPlan plan, MetricsClient& metrics, const std::atomic<bool>& stop);
  ~Loop();
  LlmLoadResult run();

  LlmRequest next_request();
  int next_endpoint(int after, Clock::time_point now) const;
  void issue(Clock::time_point now);
  void begin(Clock::time_point scheduled, Clock::time_point now);
  void dispatch(Attempt attempt, Clock::time_point now);
  void no_answer(Attempt attempt, bool reused, Clock::time_point now);
  void end(std::uint32_t id, Clock::time_point now);
  void fail_before_send(const Attempt& attempt, StreamFailure failure, const char* detail, Clock::time_point now);
  void on_event(std::uint32_t id, std::uint32_t events);
  void expire(Clock::time_point now, bool cancel_all);
  void wait(Clock::time_point now);
  void warm_up();

  LlmLoadPlan plan;
  const LlmLoadSettings& s;
  MetricsClient& metrics;
  const std::atomic<bool>& stop;
  LlmRequestShape shape;
  std::unique_ptr<SyntheticDataset> synthetic;
  std::size_t next_prompt = 0;
  int epoll_fd = -1, timer_fd = -1;
  Clock::time_point timer_armed{};
  std::vector<Target> targets;
  std::vector<std::unique_ptr<LlmConnection>> connections;
  std::vector<int> connection_endpoint;
  std::vector<Attempt> attempts;  // by connection id, while busy
  std::int64_t in_flight = 0;
  int round_robin = -1;
  std::mt19937_64 rng;
  std::exponential_distribution<double> gap;
  Clock::time_point start, end_issue, next_arrival;
  bool issuing = true;
  std::unique_ptr<LlmMetricsQueue> queue;  // during run(): the MetricsClient's only user
  std::unique_ptr<LlmLoadRecorder> recorder;
  std::vector<char> buffer = std::vector<char>(kReadBuffer);
};

LlmLoadGenerator::Loop::Loop(LlmLoadPlan p, MetricsClient& m, const std::atomic<bool>& stop_flag)
    : plan(std::move(p)), s(plan.settings), metrics(m), stop(stop_flag), rng(plan.seed), gap(plan.settings.rate) {
  if (plan.endpoints.empty()) throw std::runtime_error("llm-load: no endpoint");
  shape = {s.api, s.stream, s.ignore_eos, plan.model, {}};
  if (plan.prompts.empty()) synthetic = std::make_unique<SyntheticDataset>(s.input, s.output, plan.seed);
  for (const auto& e : plan.endpoints) targets.push_back(resolve_target(e));
  epoll_fd = ::epoll_create1(EPOLL_CLOEXEC);
  timer_fd = ::timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);
  if (epoll_fd < 0 || timer_fd < 0) throw std::runtime_error("llm-load: epoll or timerfd failed");
  epoll_event ev{};
  ev.events = EPOLLIN;
  ev.data.u32 = kTimerId;
  ::epoll_ctl(epoll_fd, EPOLL_CTL_ADD, timer_fd, &ev);
}

LlmLoadGenerator::Loop::~Loop() {
  connections.clear();
  if (timer_fd >= 0) ::close(timer_fd);
  if (epoll_fd >= 0) ::close(epoll_fd);
}

LlmRequest LlmLoadGenerator::Loop::next_request() {
  if (synthetic) return synthetic->next();
  const auto& r = plan.prompts[next_prompt];
  next_prompt = (next_prompt + 1) % plan.prompts.size();
  return r;
}

int LlmLoadGenerator::Loop::next_endpoint(int after, Clock::time_point now) const {
  const int n = static_cast<int>(targets.size());
  for (int i = 1; i <= n; ++i) {
    const int e = ((after + i) % n + n) % n;
    if (targets[static_cast<std::size_t>(e)].down_until <= now) return e;
  }
  return ((after + 1) % n + n) % n;  // all down: keep trying in turn
}

void LlmLoadGenerator::Loop::fail_before_send(const Attempt& a, StreamFailure failure, const char* detail,
                                              Clock::time_point now) {
  StreamTimeline timeline(a.scheduled, a.request.input_tokens);
  timeline.fail(now, failure, detail);
  recorder->finished(timeline.timing(), now);
}

void LlmLoadGenerator::Loop::begin(Clock::time_point scheduled, Clock::time_point now) {
  recorder->issued();
  Attempt a{next_request(), scheduled, scheduled + to_clock(s.timeout.value), 0};
  if (s.arrival != Arrival::kConcurrency && in_flight >= s.max_in_flight)
    return fail_before_send(a, StreamFailure::kRejected, "max_in_flight requests were in flight", now);
  round_robin = next_endpoint(round_robin, now);
  a.endpoint = round_robin;
  ++in_flight;
  dispatch(std::move(a), now);
}

void LlmLoadGenerator::Loop::dispatch(Attempt a, Clock::time_point now) {
  auto& t = targets[static_cast<std::size_t>(a.endpoint)];
  std::uint32_t id;
  if (!t.idle.empty()) {
    id = t.idle.back();
    t.idle.pop_back();
  } else {
    id = static_cast<std::uint32_t>(connections.size());
    connections.push_back(std::make_unique<LlmConnection>(epoll_fd, id));
    connection_endpoint.push_back(a.endpoint);
    attempts.emplace_back();
  }
  shape.host = t.host;
  auto reader = std::make_unique<LlmStreamReader>(s.api, s.stream, a.scheduled, a.request.input_tokens);
  auto& c = *connections[id];
  const bool started = c.start(llm_http_request(shape, a.request), reinterpret_cast<const sockaddr*>(&t.address),
                               t.length, std::move(reader));
  attempts[id] = std::move(a);
  if (started) return;
  const bool reused = c.reused();
  c.take();
  t.idle.push_back(id);
  no_answer(std::move(attempts[id]), reused, now);
}

void LlmLoadGenerator::Loop::no_answer(Attempt a, bool reused, Clock::time_point now) {
  if (reused && !a.resent) {  // the server closed an idle keep-alive socket: not its failure
    a.resent = true;
    return dispatch(std::move(a), now);
  }
  targets[static_cast<std::size_t>(a.endpoint)].down_until = now + kDownFor;
  if (a.tried < targets.size() && now < a.deadline) {
    recorder->failover();
    ++a.tried;
    a.endpoint = next_endpoint(a.endpoint, now);
    return dispatch(std::move(a), now);
  }
  --in_flight;
  fail_before_send(a, StreamFailure::kConnect, "no endpoint accepted the connection", now);
}

void LlmLoadGenerator::Loop::end(std::uint32_t id, Clock::time_point now) {
  auto& c = *connections[id];
  const auto reader = c.take();
  targets[static_cast<std::size_t>(connection_endpoint[id])].idle.push_back(id);
  --in_flight;
  recorder->finished(reader->timing(), now);
}

void LlmLoadGenerator::Loop::on_event(std::uint32_t id, std::uint32_t events) {
  auto& c = *connections[id];
  const bool busy = c.busy();
  const auto ev = c.on_ready(events, buffer.data(), buffer.size());
  if (!busy || ev == LlmConnection::Event::kNone) return;
  const auto now = Clock::now();
  if (ev == LlmConnection::Event::kEnded) return end(id, now);
  const bool reused = c.reused();
  c.take();
  targets[static_cast<std::size_t>(connection_endpoint[id])].idle.push_back(id);
  no_answer(std::move(attempts[id]), reused, now);
}

void LlmLoadGenerator::Loop::expire(Clock::time_point now, bool cancel_all) {
  for (std::uint32_t id = 0; id < connections.size(); ++id) {
    auto& c = *connections[id];
    if (!c.busy() || (!cancel_all && now < attempts[id].deadline)) continue;
    if (cancel_all) c.reader().fail(now, StreamFailure::kCancelled, "the run was stopped");
    else c.reader().fail(now, StreamFailure::kTimeout, "no end by the request's deadline");
    c.close();  // a late answer must not be read as the next request's
    end(id, now);
  }
}

void LlmLoadGenerator::Loop::issue(Clock::time_point now) {
  if (s.arrival == Arrival::kConcurrency) {
    // At most `concurrency` starts a turn: requests failing at once must not spin here.
    for (int started = 0; in_flight < s.concurrency && started < s.concurrency; ++started) begin(now, now);
    return;
  }
  while (next_arrival <= now && next_arrival < end_issue) {
    begin(next_arrival, now);
    const double seconds = s.arrival == Arrival::kPoisson ? gap(rng) : 1.0 / s.rate;
    next_arrival += to_clock(std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::duration<double>(seconds)));
  }
}

void LlmLoadGenerator::Loop::wait(Clock::time_point now) {
  int timeout_ms = static_cast<int>(kHousekeeping.count());
  if (issuing && s.arrival != Arrival::kConcurrency && next_arrival < now + kHousekeeping) {
    if (next_arrival <= now) {
      timeout_ms = 0;
    } else if (next_arrival != timer_armed) {  // epoll_wait counts whole ms: the timer is exact
      itimerspec spec{};
      const auto ns = std::chrono::duration_cast<std::chrono::nanoseconds>(next_arrival.time_since_epoch()).count();
      spec.it_value.tv_sec = ns / 1'000'000'000;
      spec.it_value.tv_nsec = ns % 1'000'000'000;
      ::timerfd_settime(timer_fd, TFD_TIMER_ABSTIME, &spec, nullptr);
      timer_armed = next_arrival;
    }
  }
  epoll_event events[256];
  const int n = ::epoll_wait(epoll_fd, events, 256, timeout_ms);
  for (int i = 0; i < n; ++i) {
    if (events[i].data.u32 == kTimerId) {
      std::uint64_t expirations = 0;
      [[maybe_unused]] auto r = ::read(timer_fd, &expirations, sizeof expirations);
      continue;
    }
    on_event(events[i].data.u32, events[i].events);
  }
}

// Before the clock starts, opens the connections the first requests will take, in the
// order round-robin gives them out: closed loop, one per stream; open loop, a second's
// worth (at most max_in_flight). Bounded: what is not connected in 2 s connects later.
void LlmLoadGenerator::Loop::warm_up() {
  const double wanted = s.arrival == Arrival::kConcurrency ? s.concurrency : std::min<double>(s.max_in_flight, std::ceil(s.rate));
  const auto n = static_cast<std::size_t>(std::min(wanted, 4096.0));
  for (std::size_t i = 0; i < n; ++i) {
    const int e = static_cast<int>(i % targets.size());
    auto& t = targets[static_cast<std::size_t>(e)];
    const auto id = static_cast<std::uint32_t>(connections.size());
    connections.push_back(std::make_unique<LlmConnection>(epoll_fd, id));
    connection_endpoint.push_back(e);
    attempts.emplace_back();
    connections.back()->preconnect(reinterpret_cast<const sockaddr*>(&t.address), t.length);
    t.idle.push_back(id);
  }
  for (auto& t : targets) std::reverse(t.idle.begin(), t.idle.end());  // idle is taken from the back
  const auto limit = Clock::now() + std::chrono::seconds(2);
  auto connecting = [&] {
    return std::any_of(connections.begin(), connections.end(), [](const auto& c) { return c->connecting(); });
  };
  while (connecting() && Clock::now() < limit && !stop.load(std::memory_order_relaxed)) {
    epoll_event events[256];
    const int k = ::epoll_wait(epoll_fd, events, 256, 5);
    for (int i = 0; i < k; ++i)
      if (events[i].data.u32 != kTimerId) connections[events[i].data.u32]->on_ready(events[i].events, buffer.data(), buffer.size());
  }
}

LlmLoadResult LlmLoadGenerator::Loop::run() {
  warm_up();
  start = Clock::now();
  queue = std::make_unique<LlmMetricsQueue>(metrics);
  recorder = std::make_unique<LlmLoadRecorder>(
      *queue, LlmRecorderOptions{s.slo, s.stream, s.window.value, plan.itl_budget_per_s, plan.seed, plan.send_samples},
      start);
  end_issue = start + to_clock(s.duration.value);
  next_arrival = start;
  auto last_check = start;
  for (;;) {
    const auto now = Clock::now();
    if (stop.load(std::memory_order_relaxed)) {
      issuing = false;
      expire(now, true);
      break;
    }
    if (issuing && now >= end_issue) issuing = false;
    if (issuing) issue(now);
    else if (in_flight == 0) break;
    if (now - last_check >= std::chrono::milliseconds(2)) {
      expire(now, false);
      last_check = now;
    }
    recorder->tick(now);
    wait(now);
  }
  auto result = recorder->finish(Clock::now());
  recorder.reset();
  queue.reset();  // writes what is queued and joins: the caller has its MetricsClient back
  return result;
}

LlmLoadGenerator::LlmLoadGenerator(LlmLoadPlan plan, MetricsClient& metrics, const std::atomic<bool>& stop)
    : loop_(std::make_unique<Loop>(std::move(plan), metrics, stop)) {}

LlmLoadGenerator::~LlmLoadGenerator() = default;

LlmLoadResult LlmLoadGenerator::run() { return loop_->run(); }

}  // namespace chaosbench::bench::llm
