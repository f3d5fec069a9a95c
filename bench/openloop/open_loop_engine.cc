#include "bench/openloop/open_loop_engine.h"

#include <sys/epoll.h>
#include <sys/timerfd.h>
#include <unistd.h>

#include <algorithm>
#include <stdexcept>

namespace chaosbench::bench::openloop {
namespace {

using Clock = std::chrono::steady_clock;
using Event = http::HttpClientConnection::Event;
using Failure = OpenLoopExchange::Failure;

constexpr std::uint32_t kTimerId = 0xffffffffu;
constexpr auto kHousekeeping = std::chrono::milliseconds(5);  // the longest epoll wait
constexpr auto kExpiryEvery = std::chrono::milliseconds(2);   // deadlines are checked this often
constexpr auto kDownFor = std::chrono::seconds(1);            // an endpoint that refused is skipped
constexpr std::size_t kReadBuffer = 64 * 1024;

// t + d, saturating at the end of time (d may be nanoseconds::max(): no limit).
Clock::time_point later(Clock::time_point t, std::chrono::nanoseconds d) {
  const auto room = Clock::time_point::max() - t;
  if (d >= std::chrono::duration_cast<std::chrono::nanoseconds>(room)) return Clock::time_point::max();
  return t + std::chrono::duration_cast<Clock::duration>(d);
}

}  // namespace

OpenLoopEngine::OpenLoopEngine(OpenLoopOptions options) : options_(std::move(options)), buffer_(kReadBuffer) {
  if (options_.endpoints.empty()) throw std::runtime_error("no endpoint");
  targets_ = std::vector<Target>(options_.endpoints.size());  // made in place: a deque does not move noexcept
  for (std::size_t e = 0; e < targets_.size(); ++e) targets_[e].address = options_.endpoints[e].resolve();
  round_robin_ = targets_.size() - 1;  // the first request goes to the first endpoint
  options_.max_attempts = std::clamp<std::size_t>(options_.max_attempts, 1, targets_.size());
  epoll_fd_ = ::epoll_create1(EPOLL_CLOEXEC);
  timer_fd_ = ::timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);
  epoll_event ev{};
  ev.events = EPOLLIN;
  ev.data.u32 = kTimerId;
  if (epoll_fd_ < 0 || timer_fd_ < 0 || ::epoll_ctl(epoll_fd_, EPOLL_CTL_ADD, timer_fd_, &ev) != 0) {
    if (timer_fd_ >= 0) ::close(timer_fd_);
    if (epoll_fd_ >= 0) ::close(epoll_fd_);
    throw std::runtime_error("open-loop engine: epoll or timerfd failed");
  }
}

OpenLoopEngine::~OpenLoopEngine() {
  slots_.clear();  // closes every socket before the epoll set
  ::close(timer_fd_);
  ::close(epoll_fd_);
}

std::size_t OpenLoopEngine::next_endpoint(std::size_t after, Clock::time_point now) const {
  const std::size_t n = targets_.size();
  for (std::size_t i = 1; i <= n; ++i) {
    const std::size_t e = (after + i) % n;
    if (targets_[e].down_until <= now) return e;
  }
  return (after + 1) % n;  // all down: keep trying in turn
}

bool OpenLoopEngine::may_fail_over(const Request& request, Clock::time_point now) const {
  return targets_.size() > 1 && request.attempts < options_.max_attempts &&
         (options_.timeout_per_attempt || now < request.deadline);
}

bool OpenLoopEngine::has_room(std::size_t endpoint) const {
  const auto pool = options_.connections_per_endpoint;
  return pool <= 0 || targets_[endpoint].pool < static_cast<std::size_t>(pool);
}

std::uint32_t OpenLoopEngine::add_connection(std::size_t endpoint) {
  const auto id = static_cast<std::uint32_t>(slots_.size());
  slots_.push_back({std::make_unique<http::HttpClientConnection>(epoll_fd_, id, options_.limits), endpoint, {}});
  ++targets_[endpoint].pool;
  return id;
}

void OpenLoopEngine::submit(std::unique_ptr<OpenLoopExchange> exchange, Clock::time_point now) {
  ++outstanding_;
  round_robin_ = next_endpoint(round_robin_, now);
  Request request;
  request.deadline = later(exchange->scheduled(), options_.timeout);
  request.endpoint = round_robin_;
  request.exchange = std::move(exchange);
  dispatch(std::move(request), now);
}

// Sends `request` on an idle connection of its endpoint, a new one while the pool has
// room, or queues it (at the front when `first_in_line`: a resend keeps its place).
void OpenLoopEngine::dispatch(Request request, Clock::time_point now, bool first_in_line) {
  auto& target = targets_[request.endpoint];
  std::uint32_t id;
  if (!target.idle.empty()) {
    id = target.idle.back();
    target.idle.pop_back();
  } else if (has_room(request.endpoint)) {
    id = add_connection(request.endpoint);
  } else {
    if (first_in_line) target.waiting.push_front(std::move(request));
    else target.waiting.push_back(std::move(request));
    return;
  }
  auto& connection = *slots_[id].connection;
  const auto bytes = request.exchange->request(request.endpoint);
  const auto event = connection.start(bytes, target.address, *request.exchange);
  const bool reused = connection.reused();
  slots_[id].request = std::move(request);
  if (event == Event::kNone) return;
  no_answer(release(id), reused, now);  // failed at once
}

// Takes the request off connection `id`, which goes back to its endpoint's idle list.
OpenLoopEngine::Request OpenLoopEngine::release(std::uint32_t id) {
  auto& slot = slots_[id];
  targets_[slot.endpoint].idle.push_back(id);
  return std::move(slot.request);
}

void OpenLoopEngine::pump(std::size_t endpoint, Clock::time_point now) {
  for (;;) {
    auto& target = targets_[endpoint];
    if (target.waiting.empty() || (target.idle.empty() && !has_room(endpoint))) return;
    Request request = std::move(target.waiting.front());
    target.waiting.pop_front();
    dispatch(std::move(request), now);
  }
}

void OpenLoopEngine::on_event(std::uint32_t id, std::uint32_t events) {
  const auto event = slots_[id].connection->on_ready(events, buffer_.data(), buffer_.size());
  if (event != Event::kNone) attempt_ended(id, event, slots_[id].connection->event_time());
}

void OpenLoopEngine::attempt_ended(std::uint32_t id, Event event, Clock::time_point now) {
  const std::size_t endpoint = slots_[id].endpoint;
  const bool reused = slots_[id].connection->reused();
  Request request = release(id);
  switch (event) {
    case Event::kComplete: {
      const bool can = may_fail_over(request, now);
      if (request.exchange->on_complete(slots_[id].connection->response(), can, now) && can)
        fail_over(std::move(request), now);
      else
        end(std::move(request), now);
      break;
    }
    case Event::kStopped: end(std::move(request), now); break;
    case Event::kNoAnswer: no_answer(std::move(request), reused, now); break;
    case Event::kBroken: {
      const auto error = slots_[id].connection->error();
      if (error == http::HttpResponseReader::Error::kTruncated)
        failed(std::move(request), Failure::kTruncated, "the connection closed mid-answer", now);
      else
        failed(std::move(request), Failure::kMalformed, to_string(error), now);
      break;
    }
    case Event::kNone: break;
  }
  pump(endpoint, now);
}

void OpenLoopEngine::no_answer(Request request, bool reused, Clock::time_point now) {
  if (reused && !request.resent) {  // the server closed an idle socket as the request went out
    request.resent = true;
    return dispatch(std::move(request), now, true);
  }
  targets_[request.endpoint].down_until = now + kDownFor;
  failed(std::move(request), Failure::kConnect, "the connect failed or the server closed before an answer", now);
}

void OpenLoopEngine::failed(Request request, Failure failure, std::string_view detail, Clock::time_point now) {
  const bool can = failure != Failure::kCancelled && may_fail_over(request, now);
  if (request.exchange->on_failure(failure, detail, can, now) && can) fail_over(std::move(request), now);
  else end(std::move(request), now);
}

void OpenLoopEngine::fail_over(Request request, Clock::time_point now) {
  ++failovers_;
  ++request.attempts;
  request.endpoint = next_endpoint(request.endpoint, now);
  if (options_.timeout_per_attempt) request.deadline = later(now, options_.timeout);
  dispatch(std::move(request), now);
}

void OpenLoopEngine::end(Request request, Clock::time_point now) {
  --outstanding_;
  request.exchange->on_end(now);
}

void OpenLoopEngine::expire(Clock::time_point now) {
  for (std::uint32_t id = 0; id < slots_.size(); ++id) {
    if (!slots_[id].request.exchange || now < slots_[id].request.deadline) continue;
    slots_[id].connection->close();  // a late answer must not be read as the next request's
    failed(release(id), Failure::kTimeout, "no end by the request's deadline", now);
  }
  for (auto& target : targets_) {
    std::vector<Request> expired;
    for (auto it = target.waiting.begin(); it != target.waiting.end();) {
      if (now < it->deadline) {
        ++it;
        continue;
      }
      expired.push_back(std::move(*it));
      it = target.waiting.erase(it);
    }
    for (auto& request : expired) failed(std::move(request), Failure::kTimeout, "no connection by the deadline", now);
  }
  for (std::size_t e = 0; e < targets_.size(); ++e) pump(e, now);
}

// The run ends now: every request outstanding fails with `failure`, with no failover.
void OpenLoopEngine::fail_all(Failure failure, std::string_view detail, Clock::time_point now) {
  auto finish = [&](Request request) {
    request.exchange->on_failure(failure, detail, false, now);
    end(std::move(request), now);
  };
  for (std::uint32_t id = 0; id < slots_.size(); ++id) {
    if (!slots_[id].request.exchange) continue;
    slots_[id].connection->close();
    finish(release(id));
  }
  for (auto& target : targets_) {
    while (!target.waiting.empty()) {
      Request request = std::move(target.waiting.front());
      target.waiting.pop_front();
      finish(std::move(request));
    }
  }
}

void OpenLoopEngine::wait(Clock::time_point now, Clock::time_point next_due) {
  int timeout_ms = static_cast<int>(kHousekeeping.count());
  if (next_due < now + kHousekeeping) {
    if (next_due <= now) {
      timeout_ms = 0;
    } else if (next_due != timer_armed_) {  // epoll_wait counts whole ms: the timer is exact
      itimerspec spec{};
      const auto ns = std::chrono::duration_cast<std::chrono::nanoseconds>(next_due.time_since_epoch()).count();
      spec.it_value.tv_sec = ns / 1'000'000'000;
      spec.it_value.tv_nsec = ns % 1'000'000'000;
      ::timerfd_settime(timer_fd_, TFD_TIMER_ABSTIME, &spec, nullptr);
      timer_armed_ = next_due;
    }
  }
  epoll_event events[256];
  const int n = ::epoll_wait(epoll_fd_, events, 256, timeout_ms);
  for (int i = 0; i < n; ++i) {
    if (events[i].data.u32 == kTimerId) {
      std::uint64_t expirations = 0;
      [[maybe_unused]] auto r = ::read(timer_fd_, &expirations, sizeof expirations);
      continue;
    }
    on_event(events[i].data.u32, events[i].events);
  }
}

bool OpenLoopEngine::stop_requested() const {
  return options_.stop != nullptr && options_.stop->load(std::memory_order_relaxed);
}

void OpenLoopEngine::warm_up(std::size_t count, Clock::duration limit) {
  for (std::size_t i = 0; i < count; ++i) {
    const std::size_t e = i % targets_.size();
    if (!has_room(e)) continue;
    const auto id = add_connection(e);
    slots_[id].connection->preconnect(targets_[e].address);
    targets_[e].idle.push_back(id);
  }
  for (auto& target : targets_) std::reverse(target.idle.begin(), target.idle.end());  // taken from the back
  const auto until = Clock::now() + limit;
  auto connecting = [&] {
    return std::any_of(slots_.begin(), slots_.end(), [](const Slot& s) { return s.connection->connecting(); });
  };
  while (connecting() && Clock::now() < until && !stop_requested()) {
    epoll_event events[256];
    const int n = ::epoll_wait(epoll_fd_, events, 256, static_cast<int>(kHousekeeping.count()));
    for (int i = 0; i < n; ++i)
      if (events[i].data.u32 != kTimerId) on_event(events[i].data.u32, events[i].events);
  }
}

void OpenLoopEngine::run(OpenLoopClient& client, Clock::time_point issue_until) {
  bool issuing = true;
  auto drain_end = Clock::time_point::max();
  auto next_due = Clock::time_point::max();
  auto last_expiry = Clock::now();
  for (;;) {
    const auto now = Clock::now();
    const bool stop = stop_requested();
    if (stop && options_.stop_cancels) return fail_all(Failure::kCancelled, "the run was stopped", now);
    if (issuing && (stop || now >= issue_until)) {
      issuing = false;
      next_due = Clock::time_point::max();
      drain_end = later(std::min(now, issue_until), options_.drain_limit);
    }
    if (issuing) next_due = client.issue(*this, now);
    else if (outstanding_ == 0) return;
    else if (now >= drain_end) return fail_all(Failure::kTimeout, "unanswered at the end of the drain", now);
    if (now - last_expiry >= kExpiryEvery) {
      expire(now);
      last_expiry = now;
    }
    client.tick(now);
    wait(now, next_due);
  }
}

}  // namespace chaosbench::bench::openloop
