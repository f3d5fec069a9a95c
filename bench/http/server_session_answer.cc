// ServerSession's answering side: the head it frames, the queue of bytes behind the write
// in flight (so a handler's stream never waits on a slow reader), what follows an answer
// (the next request, or a lingering close), and the close. See server_session.h.
#include <fmt/format.h>

#include <boost/asio/write.hpp>

#include "bench/http/server_session.h"

namespace chaosbench::bench::http {
namespace {

namespace net = boost::asio;

// How long an answer that closes the connection may take to reach a client still sending.
constexpr auto kSessionLinger = std::chrono::seconds(2);

// RFC 9110's reason phrases for the statuses servers send (others: "Unknown").
std::string_view session_reason(int status) {
  switch (status) {
    case 200: return "OK";
    case 201: return "Created";
    case 202: return "Accepted";
    case 204: return "No Content";
    case 301: return "Moved Permanently";
    case 302: return "Found";
    case 304: return "Not Modified";
    case 400: return "Bad Request";
    case 401: return "Unauthorized";
    case 403: return "Forbidden";
    case 404: return "Not Found";
    case 405: return "Method Not Allowed";
    case 406: return "Not Acceptable";
    case 408: return "Request Timeout";
    case 409: return "Conflict";
    case 411: return "Length Required";
    case 413: return "Payload Too Large";
    case 415: return "Unsupported Media Type";
    case 422: return "Unprocessable Entity";
    case 429: return "Too Many Requests";
    case 431: return "Request Header Fields Too Large";
    case 500: return "Internal Server Error";
    case 501: return "Not Implemented";
    case 502: return "Bad Gateway";
    case 503: return "Service Unavailable";
    case 504: return "Gateway Timeout";
    default: return "Unknown";
  }
}

// One HTTP chunk (RFC 9112 section 7.1) holding `data`, which is not empty.
void session_chunk(std::string& out, std::string_view data) {
  fmt::format_to(std::back_inserter(out), "{:x}\r\n", data.size());
  out.append(data);
  out.append("\r\n");
}

}  // namespace

bool ServerSession::current(std::uint64_t answer) const {
  return answer == answer_ && phase_ == Phase::kAnswering && !last_queued_;
}

// An error the core decides: answered, then the connection closes.
void ServerSession::fail(int status, const std::string& message) {
  phase_ = Phase::kAnswering;
  set_deadline(Clock::time_point::max());
  streaming_ = head_queued_ = last_queued_ = false;
  finished_callback_ = nullptr;
  auto response = handler_.transport_error(status, message);
  response.close = true;
  respond(++answer_, std::move(response));
}

void ServerSession::respond(std::uint64_t answer, ServerResponse response) {
  if (!current(answer) || head_queued_) return;
  release_body();  // the body is parsed (or refused) by now
  if (response.close) keep_alive_ = false;
  head_queued_ = last_queued_ = true;
  const std::size_t length = response.body.size();
  queue_head(response.status, response.content_type, &length, response.headers);
  pending_ += response.body;
  flush();
}

void ServerSession::begin_stream(std::uint64_t answer, int status, std::string_view content_type) {
  if (!current(answer) || head_queued_) return;
  release_body();
  if (version_ < 11) keep_alive_ = false;  // HTTP/1.0 has no chunks: the body ends at the close
  head_queued_ = streaming_ = true;
  queue_head(status, content_type, nullptr, {});
  flush();
}

void ServerSession::stream(std::uint64_t answer, std::string_view data) {
  if (!current(answer) || !streaming_ || data.empty()) return;
  if (version_ < 11) pending_ += data;
  else session_chunk(pending_, data);
  flush();
}

void ServerSession::end_stream(std::uint64_t answer, std::string_view data) {
  if (!current(answer) || !streaming_) return;
  last_queued_ = true;
  if (version_ < 11) {
    pending_ += data;
  } else {
    if (!data.empty()) session_chunk(pending_, data);
    pending_ += "0\r\n\r\n";
  }
  flush();
}

void ServerSession::on_finished(std::uint64_t answer, std::function<void(bool delivered)> finished) {
  if (answer == answer_ && phase_ == Phase::kAnswering) finished_callback_ = std::move(finished);
}

// Status line and headers onto pending_; a length makes a whole answer, none a stream.
void ServerSession::queue_head(int status, std::string_view content_type, const std::size_t* length,
                               std::string_view headers) {
  std::string& out = pending_;
  fmt::format_to(std::back_inserter(out), "HTTP/1.{} {} {}\r\nServer: chaosbench\r\nContent-Type: {}\r\n",
                 version_ < 11 ? 0 : 1, status, session_reason(status), content_type);
  out += headers;
  if (length) fmt::format_to(std::back_inserter(out), "Content-Length: {}\r\n", *length);
  else if (version_ >= 11) out += "Cache-Control: no-cache\r\nTransfer-Encoding: chunked\r\n";
  else out += "Cache-Control: no-cache\r\n";
  if (!keep_alive_) out += "Connection: close\r\n";
  else if (version_ < 11) out += "Connection: keep-alive\r\n";
  out += "\r\n";
}

// What was added to pending_ goes out now, or behind the write in flight.
void ServerSession::flush() {
  if (!writing_) write_next();
}

void ServerSession::write_next() {
  if (pending_.empty()) {
    set_deadline(Clock::time_point::max());  // between writes: the handler's pace
    if (last_queued_) after_answer();
    return;
  }
  inflight_.swap(pending_);
  pending_.clear();
  writing_ = true;
  // A client that does not read its answer loses the connection after request_timeout.
  set_deadline(Clock::now() + cfg_.request_timeout);
  net::async_write(socket_, net::buffer(inflight_),
                   [self = shared_from_this()](const boost::system::error_code& ec, std::size_t) {
                     self->writing_ = false;
                     if (ec) return self->client_gone();
                     self->write_next();
                   });
}

void ServerSession::after_answer() {
  if (phase_ != Phase::kAnswering) return;
  ++answer_;  // the exchange of this answer is stale from now on
  if (auto finished = std::exchange(finished_callback_, nullptr)) finished(true);
  if (phase_ == Phase::kClosed) return;  // the callback may not close, but be sure
  if (!keep_alive_ || peer_done_) return linger();
  next_request();
}

// The client left, reset, or stopped reading before its answer was written: the handler
// hears of it (a generation to cancel), then the connection closes.
void ServerSession::client_gone() {
  if (phase_ == Phase::kClosed) return;
  if (auto finished = std::exchange(finished_callback_, nullptr)) finished(false);
  close();
}

void ServerSession::release_body() {
  if (reserved_ > 0) budget_.release(reserved_);
  reserved_ = 0;
}

// After an answer that closes, the client may still be sending: closing with unread bytes
// would reset the connection and could destroy the answer in flight, so half-close and
// drop what arrives for a while.
void ServerSession::linger() {
  if (peer_done_) return close();  // it sends nothing more: nothing to wait for
  phase_ = Phase::kClosing;
  boost::system::error_code ignored;
  socket_.shutdown(tcp::socket::shutdown_send, ignored);
  set_deadline(Clock::now() + kSessionLinger);
  read_more();
}

void ServerSession::abandon() {
  finished_callback_ = nullptr;
  close();
}

void ServerSession::close() {
  if (phase_ == Phase::kClosed) return;
  phase_ = Phase::kClosed;
  finished_callback_ = nullptr;
  boost::system::error_code ignored;
  socket_.shutdown(tcp::socket::shutdown_both, ignored);
  socket_.close(ignored);  // pending operations end (aborted), and with them the session
  timer_.cancel();
}

}  // namespace chaosbench::bench::http
