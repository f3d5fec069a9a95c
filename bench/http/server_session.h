// One accepted connection of an HttpServerCore: reads requests within the limits of its
// ServerConfig, hands each whole to the ServerHandler with a ServerExchange, and writes
// the answer the handler gives, whole or streamed; then the next request on a keep-alive
// connection. Phases:
//   idle       waiting for a request's first byte, at most idle_timeout (then a silent close);
//   reading    first byte to last within request_timeout (else 408), header_limit (431),
//              body_limit (413), the budget's buffered bytes (503), well formed (400);
//   answering  the handler has the request; a read stays pending ("the watch") so a client
//              that leaves is seen at once (on_finished), and a pipelined request is
//              kept (a few KiB; the rest waits in the socket) for after the answer; each
//              write within request_timeout, none between writes (the handler's pace);
//   closing    after an answer that closes: half-closed, what still arrives is read and
//              dropped for 2 s so the answer is not destroyed by a reset (nginx's
//              lingering close).
// Every error the core decides is answered (ServerHandler::transport_error) and closes.
// One timer serves every phase's deadline lazily: armed once, it re-arms itself at most
// every min(idle_timeout, request_timeout), so a request costs no timer operation.
// Threads: everything runs on the connection's strand (the socket's executor); the
// exchange's calls are dispatched onto it; abandon() alone comes from the owner, once no
// io thread runs. The session lives as long as an operation is pending on it or a handler
// holds its exchange.
#pragma once

#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/steady_timer.hpp>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>

#include "bench/http/beast_request_parser.h"
#include "bench/http/connection_budget.h"
#include "bench/http/server_config.h"
#include "bench/http/server_handler.h"
#include "bench/http/session_buffer.h"
#include "bench/http/session_registry.h"

namespace chaosbench::bench::http {

class ServerSession : public std::enable_shared_from_this<ServerSession> {
 public:
  using tcp = boost::asio::ip::tcp;
  using Clock = std::chrono::steady_clock;

  // counted: this connection holds one of the budget's slots (released on destruction).
  ServerSession(tcp::socket&& socket, const ServerConfig& cfg, ConnectionBudget& budget, ServerHandler& handler,
                SessionRegistry& registry, bool counted);
  ~ServerSession();
  ServerSession(const ServerSession&) = delete;
  ServerSession& operator=(const ServerSession&) = delete;

  void start();   // reads requests
  void refuse();  // answers 503 "too many connections" and closes (holds a refusal slot)
  // The core stopped (no io thread runs): drops the answer's end callback uncalled, closes.
  void abandon();

  // ServerExchange's calls, on the strand only. `answer` names the answer a call is for:
  // one that is no longer being given makes it a no-op.
  tcp::socket::executor_type executor() { return socket_.get_executor(); }
  void respond(std::uint64_t answer, ServerResponse response);
  void begin_stream(std::uint64_t answer, int status, std::string_view content_type);
  void stream(std::uint64_t answer, std::string_view data);
  void end_stream(std::uint64_t answer, std::string_view data);
  void on_finished(std::uint64_t answer, std::function<void(bool delivered)> finished);

 private:
  enum class Phase { kIdle, kReading, kAnswering, kClosing, kClosed };

  // Reading (server_session.cc).
  void next_request();
  void begin_request();
  void parse();
  bool admit_body();
  void hand_over();
  void read_more();
  void on_read(const boost::system::error_code& ec, std::size_t n);
  void on_read_error(const boost::system::error_code& ec);
  // Deadlines (server_session.cc).
  void set_deadline(Clock::time_point deadline);
  void arm_timer(Clock::time_point at);
  void on_timer(const boost::system::error_code& ec);
  void on_deadline();
  // Answering and closing (server_session_answer.cc).
  void fail(int status, const std::string& message);
  bool current(std::uint64_t answer) const;
  void queue_head(int status, std::string_view content_type, const std::size_t* length, std::string_view headers);
  void flush();
  void write_next();
  void after_answer();
  void client_gone();
  void release_body();
  void linger();
  void close();

  tcp::socket socket_;
  boost::asio::steady_timer timer_;
  const ServerConfig& cfg_;
  ConnectionBudget& budget_;
  ServerHandler& handler_;
  SessionRegistry& registry_;
  bool counted_;
  bool refusing_ = false;
  Phase phase_ = Phase::kIdle;
  // The lazy timer: the phase's deadline (max: none) and when the timer is set to fire.
  Clock::time_point deadline_ = Clock::time_point::max();
  Clock::time_point timer_at_{};
  bool timer_armed_ = false;
  // Reading.
  SessionBuffer in_;
  BeastRequestParser parser_;
  bool read_pending_ = false;
  bool big_body_ = false;        // this request's body is read in large reads
  std::uint64_t reserved_ = 0;   // body bytes reserved in budget_
  bool peer_done_ = false;       // the client sent its end (or failed): no more requests
  // The answer being given.
  std::uint64_t answer_ = 0;     // counts answers; ServerExchange names one by it
  unsigned version_ = 11;
  bool keep_alive_ = false;
  bool streaming_ = false;
  bool head_queued_ = false;
  bool last_queued_ = false;  // its last bytes are queued
  std::function<void(bool delivered)> finished_callback_;
  std::string pending_;   // bytes queued behind the write in flight
  std::string inflight_;  // bytes being written
  bool writing_ = false;
};

}  // namespace chaosbench::bench::http
