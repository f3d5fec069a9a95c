// The open-loop load engine both load generators drive (the KServe one, bench/load/, and
// the LLM one, bench/llm/load/): requests fall due at their scheduled times and go out on
// one thread, one epoll loop with a timerfd for the next arrival, over pools of
// keep-alive connections per endpoint (http::HttpClientConnection). The generator is its
// client (open_loop_client.h: the arrival process) and makes each request
// (open_loop_exchange.h: the bytes, the answer's handling, the outcome); the engine keeps
// the sockets, the endpoints, the deadlines and the failover.
//
// No coordinated omission: the engine never delays a request to suit the server. It
// sends each as soon as it is due (or a pooled connection frees), and the exchange
// measures from its scheduled time, so a stalled server or client cannot hide queueing.
//
// Endpoints: round robin over the ones up. When an attempt gets no answer (the connect
// failed, or the server closed before any byte): on a socket open before the request (a
// kept-alive or warmed-up one, whose idle close raced the request) the request is resent
// once on the same endpoint, not counted; otherwise the endpoint counts as down for a
// second and the exchange may send the request on to the next endpoint (a failover,
// counted), within OpenLoopOptions' attempts and deadline. Any other failed attempt, or a
// complete answer the exchange refuses (a 5xx), may fail over the same way. A timed-out
// attempt's socket is closed, so a late answer is never read as the next request's.
// Threads: one. Only OpenLoopOptions::stop may be set from elsewhere.
#pragma once

#include <chrono>
#include <cstdint>
#include <deque>
#include <memory>
#include <vector>

#include "bench/http/http_client_connection.h"
#include "bench/openloop/open_loop_client.h"
#include "bench/openloop/open_loop_exchange.h"
#include "bench/openloop/open_loop_options.h"

namespace chaosbench::bench::openloop {

class OpenLoopEngine {
 public:
  using Clock = std::chrono::steady_clock;

  // Resolves the endpoints (blocking) and makes the epoll set and its timer. Throws
  // std::runtime_error naming an endpoint that does not resolve, or when epoll fails.
  explicit OpenLoopEngine(OpenLoopOptions options);
  ~OpenLoopEngine();
  OpenLoopEngine(const OpenLoopEngine&) = delete;
  OpenLoopEngine& operator=(const OpenLoopEngine&) = delete;

  // Before the clock starts: opens `count` connections (fewer where pools are fixed),
  // spread over the endpoints in turn, in the order requests will take them, and waits up
  // to `limit` for their handshakes or the stop flag. Those still connecting finish later.
  void warm_up(std::size_t count, Clock::duration limit);
  // Runs the loop (blocking): calls client.issue each turn until `issue_until` (or a
  // stop), then waits for the requests outstanding, each bounded by its deadline and all
  // by the drain limit; with OpenLoopOptions::stop_cancels a stop ends it at once.
  void run(OpenLoopClient& client, Clock::time_point issue_until);

  // From client.issue: sends `exchange` to the next endpoint in turn. Its callbacks may
  // run before this returns (a connect refused at once, with no endpoint left to try).
  void submit(std::unique_ptr<OpenLoopExchange> exchange, Clock::time_point now);

  std::int64_t outstanding() const { return outstanding_; }  // submitted, not ended
  std::int64_t failovers() const { return failovers_; }      // moves to the next endpoint
  std::size_t endpoint_count() const { return targets_.size(); }

 private:
  struct Request {
    std::unique_ptr<OpenLoopExchange> exchange;  // null: no request
    Clock::time_point deadline;
    std::size_t endpoint = 0;
    std::size_t attempts = 1;  // endpoints tried
    bool resent = false;       // resent once after an idle socket's close
  };
  struct Target {
    http::HttpClientEndpoint::Address address;
    std::vector<std::uint32_t> idle;  // connections without a request (open or closed), taken from the back
    std::deque<Request> waiting;      // fixed pools: requests waiting for a connection
    std::size_t pool = 0;             // connections made for it
    Clock::time_point down_until{};
  };
  struct Slot {
    std::unique_ptr<http::HttpClientConnection> connection;
    std::size_t endpoint = 0;
    Request request;
  };

  std::size_t next_endpoint(std::size_t after, Clock::time_point now) const;
  bool may_fail_over(const Request& request, Clock::time_point now) const;
  bool has_room(std::size_t endpoint) const;  // for one more connection
  bool stop_requested() const;
  std::uint32_t add_connection(std::size_t endpoint);
  void dispatch(Request request, Clock::time_point now, bool first_in_line = false);
  void on_event(std::uint32_t id, std::uint32_t events);
  void attempt_ended(std::uint32_t id, http::HttpClientConnection::Event event, Clock::time_point now);
  void no_answer(Request request, bool reused, Clock::time_point now);
  void failed(Request request, OpenLoopExchange::Failure failure, std::string_view detail, Clock::time_point now);
  void fail_over(Request request, Clock::time_point now);
  void end(Request request, Clock::time_point now);
  Request release(std::uint32_t id);
  void pump(std::size_t endpoint, Clock::time_point now);
  void expire(Clock::time_point now);
  void fail_all(OpenLoopExchange::Failure failure, std::string_view detail, Clock::time_point now);
  void wait(Clock::time_point now, Clock::time_point next_due);

  OpenLoopOptions options_;
  std::vector<Target> targets_;
  std::vector<Slot> slots_;  // by connection id
  int epoll_fd_ = -1;
  int timer_fd_ = -1;
  Clock::time_point timer_armed_{};
  std::size_t round_robin_;
  std::int64_t outstanding_ = 0;
  std::int64_t failovers_ = 0;
  std::vector<char> buffer_;  // every connection's reads, one at a time
};

}  // namespace chaosbench::bench::openloop
