// ServerSession's reading side and its deadlines. See server_session.h; the answering
// side is server_session_answer.cc.
#include "bench/http/server_session.h"

#include <fmt/format.h>

#include <boost/asio/dispatch.hpp>

namespace chaosbench::bench::http {
namespace {

namespace net = boost::asio;

// One read while idle, watching or lingering: most requests whole, little for idle sockets.
constexpr std::size_t kSessionSmallRead = 4096;
// One read of a large body.
constexpr std::size_t kSessionBodyRead = 64u << 10;
// Bytes of a pipelined request kept while an answer is given (the rest waits in the socket).
constexpr std::size_t kSessionWatchLimit = 16u << 10;

std::string session_seconds(std::chrono::milliseconds d) {
  return fmt::format("{:g} s", static_cast<double>(d.count()) / 1000.0);
}

}  // namespace

ServerSession::ServerSession(tcp::socket&& socket, const ServerConfig& cfg, ConnectionBudget& budget,
                             ServerHandler& handler, SessionRegistry& registry, bool counted)
    : socket_(std::move(socket)),
      timer_(socket_.get_executor()),
      cfg_(cfg),
      budget_(budget),
      handler_(handler),
      registry_(registry),
      counted_(counted) {
  registry_.add(this);
  if (cfg_.no_delay) {
    // Each streamed chunk is its own small write: Nagle would hold it for the last one's ACK.
    boost::system::error_code ignored;
    socket_.set_option(tcp::no_delay(true), ignored);
  }
}

ServerSession::~ServerSession() {
  registry_.remove(this);
  release_body();
  if (counted_) budget_.close();
  if (refusing_) budget_.refused();
}

void ServerSession::start() {
  net::dispatch(socket_.get_executor(), [self = shared_from_this()] { self->next_request(); });
}

void ServerSession::refuse() {
  refusing_ = true;
  net::dispatch(socket_.get_executor(), [self = shared_from_this()] {
    self->fail(503, fmt::format("too many connections (the server's limit is {}): try again later",
                                self->budget_.max_connections()));
  });
}

// Between requests: one already pipelined is read at once, else the idle wait begins.
void ServerSession::next_request() {
  if (!in_.empty()) return begin_request();
  phase_ = Phase::kIdle;
  set_deadline(Clock::now() + cfg_.idle_timeout);
  read_more();
}

// The first byte of a request is here: from now on, request_timeout.
void ServerSession::begin_request() {
  phase_ = Phase::kReading;
  parser_.reset(cfg_.header_limit, cfg_.body_limit);
  big_body_ = false;
  set_deadline(Clock::now() + cfg_.request_timeout);
  parse();
}

void ServerSession::parse() {
  for (;;) {
    std::size_t used = 0;
    const auto step = parser_.put(in_.data(), used);
    in_.consume(used);
    switch (step) {
      case BeastRequestParser::Step::kFailed: return fail(parser_.failure().status, parser_.failure().message);
      case BeastRequestParser::Step::kHeader:
        if (!admit_body()) return;
        continue;
      case BeastRequestParser::Step::kDone: return hand_over();
      case BeastRequestParser::Step::kNeedMore: return read_more();
    }
  }
}

// Reserves the body before reading it (a chunked one may grow to the limit), so stalled
// large bodies are refused rather than buffered past the budget.
bool ServerSession::admit_body() {
  const auto declared = parser_.content_length();
  const std::uint64_t want = declared ? *declared : (parser_.chunked() ? cfg_.body_limit : 0);
  if (want > cfg_.body_limit) {
    fail(413, fmt::format("request body over the limit of {} bytes", cfg_.body_limit));
    return false;
  }
  if (!budget_.try_reserve(want)) {
    fail(503, fmt::format("the server buffers {} bytes of request bodies at most: try again later",
                          budget_.max_buffered()));
    return false;
  }
  reserved_ = want;
  big_body_ = want > kSessionSmallRead;
  return true;
}

void ServerSession::hand_over() {
  ServerRequest request = parser_.release();
  phase_ = Phase::kAnswering;
  set_deadline(Clock::time_point::max());  // the handler's pace, not the client's
  version_ = request.version;
  keep_alive_ = request.keep_alive;
  streaming_ = head_queued_ = last_queued_ = false;
  const std::uint64_t answer = ++answer_;
  read_more();  // the watch
  try {
    handler_.handle(std::move(request), ServerExchange(shared_from_this(), answer));
  } catch (const std::exception& e) {
    if (current(answer) && !head_queued_) {
      auto response = handler_.transport_error(500, std::string("internal error: ") + e.what());
      response.close = true;
      respond(answer, std::move(response));
    }
  }
}

void ServerSession::read_more() {
  if (read_pending_ || peer_done_ || phase_ == Phase::kClosed) return;
  if (phase_ == Phase::kAnswering && in_.size() >= kSessionWatchLimit) return;
  if (phase_ == Phase::kClosing) in_.clear();
  const std::size_t want = phase_ == Phase::kReading && big_body_ ? kSessionBodyRead : kSessionSmallRead;
  char* at = in_.prepare(want);
  read_pending_ = true;
  socket_.async_read_some(net::buffer(at, std::min(in_.free_space(), kSessionBodyRead)),
                          [self = shared_from_this()](const boost::system::error_code& ec, std::size_t n) {
                            self->on_read(ec, n);
                          });
}

void ServerSession::on_read(const boost::system::error_code& ec, std::size_t n) {
  read_pending_ = false;
  in_.commit(n);
  if (ec) return on_read_error(ec);
  switch (phase_) {
    case Phase::kIdle: return begin_request();
    case Phase::kReading: return parse();
    case Phase::kAnswering: return read_more();  // keep watching while the kept bytes are few
    case Phase::kClosing: return read_more();    // dropped
    case Phase::kClosed: return;
  }
}

void ServerSession::on_read_error(const boost::system::error_code& ec) {
  if (ec == net::error::operation_aborted || phase_ == Phase::kClosed) return;
  peer_done_ = true;
  switch (phase_) {
    case Phase::kReading:
      // A request cut short is malformed; a reset gets no answer.
      if (ec == net::error::eof && parser_.put_eof() == BeastRequestParser::Step::kFailed)
        return fail(parser_.failure().status, parser_.failure().message);
      return close();
    case Phase::kAnswering:
      // The answer still goes out (to a half-closed client) unless the handler cares.
      if (finished_callback_) client_gone();
      return;
    default: return close();
  }
}

void ServerSession::set_deadline(Clock::time_point deadline) {
  deadline_ = deadline;
  if (deadline == Clock::time_point::max() || (timer_armed_ && timer_at_ <= deadline)) return;
  arm_timer(std::min(deadline, Clock::now() + std::min(cfg_.idle_timeout, cfg_.request_timeout)));
}

// Fires at `at` (re-arming cancels a wait still pending). The wait holds the session
// weakly: a timer alone never keeps a connection.
void ServerSession::arm_timer(Clock::time_point at) {
  timer_armed_ = true;
  timer_at_ = at;
  timer_.expires_at(at);
  timer_.async_wait([weak = weak_from_this()](const boost::system::error_code& ec) {
    if (auto self = weak.lock()) self->on_timer(ec);
  });
}

void ServerSession::on_timer(const boost::system::error_code& ec) {
  if (ec == net::error::operation_aborted) return;  // re-armed or closed: the new wait decides
  timer_armed_ = false;
  if (phase_ == Phase::kClosed || deadline_ == Clock::time_point::max()) return;
  const auto now = Clock::now();
  if (now < deadline_)  // not due yet: a deadline set after the timer was armed
    return arm_timer(std::min(deadline_, now + std::min(cfg_.idle_timeout, cfg_.request_timeout)));
  on_deadline();
}

void ServerSession::on_deadline() {
  deadline_ = Clock::time_point::max();
  switch (phase_) {
    case Phase::kReading: return fail(408, "request not received within " + session_seconds(cfg_.request_timeout));
    case Phase::kAnswering: return client_gone();  // a write the client did not take in time
    default: return close();                        // idle, or the lingering close is over
  }
}

}  // namespace chaosbench::bench::http
