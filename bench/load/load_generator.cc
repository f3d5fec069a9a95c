#include "bench/load/load_generator.h"

#include <netdb.h>
#include <sys/epoll.h>
#include <sys/timerfd.h>
#include <unistd.h>

#include <deque>
#include <cstring>
#include <random>
#include <stdexcept>

#include "bench/load/http_connection.h"
#include "bench/load/load_recorder.h"
#include "bench/load/request_builder.h"

namespace chaosbench::bench::load {
namespace {

using Clock = std::chrono::steady_clock;
constexpr std::uint32_t kTimerId = 0xffffffffu;
constexpr auto kHousekeeping = std::chrono::milliseconds(5);
constexpr auto kDownFor = std::chrono::seconds(1);

// A request not yet answered: its scheduled time survives retries.
struct Pending {
  Clock::time_point scheduled;
  Clock::time_point attempt_start;  // the timeout runs from here
  int endpoint = 0;
  int attempts = 1;
  bool resent_stale = false;
};

struct Target {
  sockaddr_storage address{};
  socklen_t length = 0;
  std::vector<std::string> requests;  // variants, sent in turn
  std::size_t next_variant = 0;
  std::deque<Pending> queue;          // waiting for a free connection
  std::vector<std::uint32_t> free;    // connections without a request (open or closed)
  Clock::time_point down_until{};
};

Target resolve(const http::HttpClientEndpoint& endpoint) {
  addrinfo hints{};
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* found = nullptr;
  const auto port = std::to_string(endpoint.port);
  if (int rc = getaddrinfo(endpoint.host.c_str(), port.c_str(), &hints, &found); rc != 0 || !found)
    throw std::runtime_error("cannot resolve " + endpoint.text() + ": " + gai_strerror(rc));
  Target target;
  std::memcpy(&target.address, found->ai_addr, found->ai_addrlen);
  target.length = found->ai_addrlen;
  freeaddrinfo(found);
  return target;
}

}  // namespace

struct LoadGenerator::Loop {
  Loop(const LoadConfig& config, MetricsClient& metrics, const std::atomic<bool>& stop);
  ~Loop();
  LoadResult run();

  int next_endpoint(int after, Clock::time_point now);
  void enqueue(Pending p) { targets[static_cast<std::size_t>(p.endpoint)].queue.push_back(p); }
  void dispatch(int endpoint, Clock::time_point now);
  void attempt_failed(Pending p, Clock::time_point now);
  void on_event(std::uint32_t id, std::uint32_t events, Clock::time_point now);
  void check_timeouts(Clock::time_point now);
  void issue(Clock::time_point now);
  void wait(Clock::time_point now);
  void fail_everything(Clock::time_point now);

  const LoadConfig& config;
  const std::atomic<bool>& stop;
  int epoll_fd = -1;
  int timer_fd = -1;
  Clock::time_point timer_armed{};
  std::vector<Target> targets;
  std::vector<std::unique_ptr<HttpConnection>> connections;
  std::vector<int> connection_endpoint;
  std::vector<Pending> in_flight;  // by connection id
  std::int64_t outstanding = 0;    // queued + in flight
  int round_robin = 0;
  std::mt19937_64 rng;
  std::exponential_distribution<double> gap;
  Clock::time_point start, end_issue, next_arrival;
  bool issuing = true;
  MetricsClient& metrics;
  std::unique_ptr<LoadRecorder> recorder;
};

LoadGenerator::Loop::Loop(const LoadConfig& cfg, MetricsClient& m, const std::atomic<bool>& stop_flag)
    : config(cfg), stop(stop_flag), rng(cfg.seed), gap(cfg.qps > 0 ? cfg.qps : 1.0), metrics(m) {
  epoll_fd = epoll_create1(EPOLL_CLOEXEC);
  timer_fd = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);
  if (epoll_fd < 0 || timer_fd < 0) throw std::runtime_error("load generator: epoll/timerfd failed");
  epoll_event ev{};
  ev.events = EPOLLIN;
  ev.data.u32 = kTimerId;
  epoll_ctl(epoll_fd, EPOLL_CTL_ADD, timer_fd, &ev);
  auto requests = build_requests(cfg);
  for (std::size_t e = 0; e < cfg.endpoints.size(); ++e) {
    targets.push_back(resolve(cfg.endpoints[e]));
    targets.back().requests = std::move(requests[e]);
    for (int c = 0; c < cfg.connections; ++c) {
      const auto id = static_cast<std::uint32_t>(connections.size());
      connections.push_back(std::make_unique<HttpConnection>(epoll_fd, id));
      connection_endpoint.push_back(static_cast<int>(e));
      targets.back().free.push_back(id);
    }
  }
  in_flight.resize(connections.size());
}

LoadGenerator::Loop::~Loop() {
  connections.clear();
  if (timer_fd >= 0) ::close(timer_fd);
  if (epoll_fd >= 0) ::close(epoll_fd);
}

int LoadGenerator::Loop::next_endpoint(int after, Clock::time_point now) {
  const int n = static_cast<int>(targets.size());
  for (int i = 1; i <= n; ++i) {
    const int e = (after + i) % n;
    if (targets[static_cast<std::size_t>(e)].down_until <= now) return e;
  }
  return (after + 1) % n;  // all down: keep trying in turn
}

void LoadGenerator::Loop::dispatch(int endpoint, Clock::time_point now) {
  auto& t = targets[static_cast<std::size_t>(endpoint)];
  while (!t.queue.empty() && !t.free.empty()) {
    const auto id = t.free.back();
    t.free.pop_back();
    Pending p = t.queue.front();
    t.queue.pop_front();
    const auto& request = t.requests[t.next_variant];
    t.next_variant = (t.next_variant + 1) % t.requests.size();
    in_flight[id] = p;
    if (!connections[id]->start(request, reinterpret_cast<const sockaddr*>(&t.address), t.length)) {
      t.free.push_back(id);
      ++recorder->counters().connect_errors;
      t.down_until = now + kDownFor;
      attempt_failed(p, now);
    }
  }
}

void LoadGenerator::Loop::attempt_failed(Pending p, Clock::time_point now) {
  if (p.attempts < 2 && targets.size() > 1) {
    ++recorder->counters().failovers;
    ++p.attempts;
    p.attempt_start = now;
    p.endpoint = next_endpoint(p.endpoint, now);
    enqueue(p);
    return;
  }
  recorder->failed(p.scheduled, now);
  --outstanding;
}

void LoadGenerator::Loop::on_event(std::uint32_t id, std::uint32_t events, Clock::time_point now) {
  auto& connection = *connections[id];
  const bool was_busy = connection.busy();
  const auto event = connection.on_ready(events);
  if (event == HttpConnection::Event::kNone) return;
  const int endpoint = connection_endpoint[id];
  auto& t = targets[static_cast<std::size_t>(endpoint)];
  Pending p = in_flight[id];
  if (was_busy) t.free.push_back(id);
  if (event == HttpConnection::Event::kFailed) {
    if (connection.failed_stale() && !p.resent_stale) {
      p.resent_stale = true;  // an idle keep-alive close, not the server failing
      t.queue.push_front(p);
    } else {
      ++recorder->counters().connect_errors;
      attempt_failed(p, now);
    }
  } else if (connection.status() >= 500) {
    ++recorder->counters().http_errors;
    attempt_failed(p, now);
  } else if (connection.status() >= 400) {
    recorder->failed(p.scheduled, now);  // the request is wrong: another replica will not help
    --outstanding;
  } else {
    recorder->completed(p.scheduled, now);
    --outstanding;
  }
  dispatch(endpoint, now);
}

void LoadGenerator::Loop::check_timeouts(Clock::time_point now) {
  const auto limit = now - config.timeout;
  for (std::uint32_t id = 0; id < connections.size(); ++id) {
    if (!connections[id]->busy() || in_flight[id].attempt_start > limit) continue;
    connections[id]->close();  // a late answer must not be taken for the next request's
    const int endpoint = connection_endpoint[id];
    targets[static_cast<std::size_t>(endpoint)].free.push_back(id);
    ++recorder->counters().timeouts;
    attempt_failed(in_flight[id], now);
  }
  for (auto& t : targets) {
    while (!t.queue.empty() && t.queue.front().attempt_start <= limit) {
      Pending p = t.queue.front();
      t.queue.pop_front();
      ++recorder->counters().timeouts;
      attempt_failed(p, now);
    }
  }
  for (std::size_t e = 0; e < targets.size(); ++e) dispatch(static_cast<int>(e), now);
}

void LoadGenerator::Loop::issue(Clock::time_point now) {
  auto add = [&](Clock::time_point scheduled) {
    round_robin = next_endpoint(round_robin, now);
    enqueue({scheduled, scheduled, round_robin});
    ++outstanding;
    recorder->issued();
  };
  switch (config.scenario) {
    case LoadScenario::kServer:
      while (next_arrival <= now && next_arrival < end_issue) {
        add(next_arrival);
        next_arrival += std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(gap(rng)));
      }
      break;
    case LoadScenario::kOffline:
      while (outstanding < static_cast<std::int64_t>(connections.size())) add(now);
      break;
    case LoadScenario::kSingleStream:
      if (outstanding == 0) add(now);
      break;
  }
  for (std::size_t e = 0; e < targets.size(); ++e) dispatch(static_cast<int>(e), now);
}

void LoadGenerator::Loop::wait(Clock::time_point now) {
  int timeout_ms = static_cast<int>(kHousekeeping.count());
  if (issuing && config.scenario == LoadScenario::kServer && next_arrival < now + kHousekeeping) {
    if (next_arrival <= now) {
      timeout_ms = 0;
    } else if (next_arrival != timer_armed) {
      itimerspec spec{};
      const auto ns = std::chrono::duration_cast<std::chrono::nanoseconds>(next_arrival.time_since_epoch()).count();
      spec.it_value.tv_sec = ns / 1'000'000'000;
      spec.it_value.tv_nsec = ns % 1'000'000'000;
      timerfd_settime(timer_fd, TFD_TIMER_ABSTIME, &spec, nullptr);
      timer_armed = next_arrival;
    }
  }
  epoll_event events[256];
  const int n = epoll_wait(epoll_fd, events, 256, timeout_ms);
  const auto woke = Clock::now();
  for (int i = 0; i < n; ++i) {
    if (events[i].data.u32 == kTimerId) {
      std::uint64_t expirations = 0;
      [[maybe_unused]] auto r = ::read(timer_fd, &expirations, sizeof expirations);
      continue;
    }
    on_event(events[i].data.u32, events[i].events, woke);
  }
}

void LoadGenerator::Loop::fail_everything(Clock::time_point now) {
  for (std::uint32_t id = 0; id < connections.size(); ++id) {
    if (!connections[id]->busy()) continue;
    connections[id]->close();
    ++recorder->counters().timeouts;
    recorder->failed(in_flight[id].scheduled, now);
  }
  for (auto& t : targets) {
    for (const auto& p : t.queue) {
      ++recorder->counters().timeouts;
      recorder->failed(p.scheduled, now);
    }
    t.queue.clear();
  }
  outstanding = 0;
}

LoadResult LoadGenerator::Loop::run() {
  start = Clock::now();
  recorder = std::make_unique<LoadRecorder>(metrics, start, config.keep_requests, config.window);
  end_issue = start + std::chrono::duration_cast<Clock::duration>(config.duration);
  const auto drain_limit = end_issue + 2 * config.timeout + std::chrono::milliseconds(100);
  next_arrival = start;
  auto last_check = start;
  for (;;) {
    const auto now = Clock::now();
    if (issuing && (now >= end_issue || stop.load(std::memory_order_relaxed))) {
      issuing = false;
      end_issue = std::min(end_issue, now);
    }
    if (issuing) issue(now);
    else if (outstanding == 0) break;
    else if (now >= drain_limit) {
      fail_everything(now);
      break;
    }
    if (now - last_check >= std::chrono::milliseconds(2)) {
      check_timeouts(now);
      last_check = now;
    }
    recorder->tick(now);
    wait(now);
  }
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
