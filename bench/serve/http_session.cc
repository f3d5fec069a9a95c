#include "bench/serve/http_session.h"

#include <fmt/format.h>

#include <boost/asio/dispatch.hpp>
#include <boost/asio/post.hpp>

namespace chaosbench::bench::serve {
namespace {

namespace beast = boost::beast;
namespace http = beast::http;
namespace net = boost::asio;

// The first read of a request: enough for most headers, small enough for idle sockets.
constexpr std::size_t kFirstRead = 4096;
// How long an error answer may take to reach a client that keeps sending.
constexpr auto kLinger = std::chrono::seconds(2);

std::string seconds_text(std::chrono::milliseconds d) { return fmt::format("{:g} s", static_cast<double>(d.count()) / 1000.0); }

}  // namespace

HttpSession::HttpSession(tcp::socket&& socket, InferenceService& service, const HttpServerConfig& cfg,
                         ConnectionBudget& budget, bool counted)
    : stream_(std::move(socket)),
      deadline_(stream_.get_executor()),
      service_(service),
      cfg_(cfg),
      budget_(budget),
      counted_(counted) {}

HttpSession::~HttpSession() {
  release_body();
  if (counted_) budget_.close();
  if (refusing_) budget_.refused();
}

void HttpSession::start() {
  net::dispatch(stream_.get_executor(), [self = shared_from_this()] { self->read_request(); });
}

void HttpSession::refuse() {
  refusing_ = true;
  net::dispatch(stream_.get_executor(), [self = shared_from_this()] {
    self->fail(503, fmt::format("too many connections (the server's limit is {}): try again later",
                                self->budget_.max_connections()));
  });
}

void HttpSession::read_request() {
  parser_.emplace();
  parser_->header_limit(static_cast<std::uint32_t>(cfg_.header_limit));
  parser_->body_limit(cfg_.body_limit);
  if (buffer_.size() > 0) return read_header();  // a pipelined request is already here
  // Waiting for a request: only the idle timeout applies (Beast closes the socket then).
  stream_.expires_after(cfg_.idle_timeout);
  stream_.async_read_some(buffer_.prepare(kFirstRead), [self = shared_from_this()](beast::error_code ec, std::size_t n) {
    self->buffer_.commit(n);
    if (ec) return self->close();
    self->read_header();
  });
}

void HttpSession::read_header() {
  // From the request's first byte to its last: request_timeout, then 408.
  stream_.expires_never();
  timed_out_ = false;
  deadline_.expires_after(cfg_.request_timeout);
  deadline_.async_wait([self = shared_from_this()](beast::error_code ec) {
    if (ec) return;  // cancelled: the request arrived in time
    self->timed_out_ = true;
    beast::error_code ignored;
    self->stream_.socket().cancel(ignored);
  });
  http::async_read_header(stream_, buffer_, *parser_,
                          [self = shared_from_this()](beast::error_code ec, std::size_t) { self->on_header(ec); });
}

void HttpSession::on_header(beast::error_code ec) {
  if (ec || timed_out_) return on_error(ec);  // timed_out_: the deadline fired as the header completed
  // Reserve the body before reading it; a chunked body may grow to the limit.
  const auto declared = parser_->content_length();
  const std::uint64_t want = declared ? *declared : (parser_->chunked() ? cfg_.body_limit : 0);
  if (want > cfg_.body_limit)
    return fail(413, fmt::format("request body over the limit of {} bytes", cfg_.body_limit));
  if (!budget_.try_reserve(want))
    return fail(503, fmt::format("the server buffers {} bytes of request bodies at most: try again later",
                                 budget_.max_buffered()));
  reserved_ = want;
  http::async_read(stream_, buffer_, *parser_,
                   [self = shared_from_this()](beast::error_code e, std::size_t) { self->on_body(e); });
}

void HttpSession::on_body(beast::error_code ec) {
  deadline_.cancel();
  if (ec) return on_error(ec);
  auto req = parser_->release();
  keep_alive_ = req.keep_alive();
  version_ = req.version();
  HttpRequest request{std::string(req.method_string()), std::string(req.target()), std::move(req.body())};
  service_.handle(std::move(request), [self = shared_from_this()](HttpResponse response) {
    // The reply may come from the batching thread: back onto this connection's strand.
    net::post(self->stream_.get_executor(), [self, response = std::move(response)]() mutable {
      self->send(std::move(response), self->keep_alive_);
    });
  });
}

void HttpSession::on_error(beast::error_code ec) {
  if (timed_out_)
    return fail(408, "request not received within " + seconds_text(cfg_.request_timeout));
  if (ec == http::error::header_limit)
    return fail(431, fmt::format("request header over the limit of {} bytes", cfg_.header_limit));
  if (ec == http::error::body_limit)
    return fail(413, fmt::format("request body over the limit of {} bytes", cfg_.body_limit));
  if (ec == http::error::end_of_stream || ec == beast::error::timeout || ec == net::error::operation_aborted) {
    deadline_.cancel();
    return close();
  }
  if (ec.category() == http::make_error_code(http::error::bad_target).category())  // any HTTP parse error
    return fail(400, "bad HTTP request: " + ec.message());
  deadline_.cancel();
  close();
}

void HttpSession::fail(int status, const std::string& message) {
  send(service_.transport_error(status, message), false);
}

void HttpSession::send(HttpResponse response, bool keep_alive) {
  deadline_.cancel();  // its handler holds the session (and the socket) until it runs
  release_body();      // the body is parsed (or refused) by now
  response_ = {};
  response_.version(version_);
  response_.result(static_cast<http::status>(response.status));
  response_.set(http::field::server, "chaosbench");
  response_.set(http::field::content_type, response.content_type);
  response_.keep_alive(keep_alive);
  response_.body() = std::move(response.body);
  response_.prepare_payload();
  // A client that does not read its answer loses the connection after request_timeout.
  stream_.expires_after(cfg_.request_timeout);
  http::async_write(stream_, response_, [self = shared_from_this(), keep_alive](beast::error_code ec, std::size_t) {
    if (ec) return self->close();
    if (!keep_alive) return self->linger();
    self->read_request();
  });
}

void HttpSession::release_body() {
  if (reserved_ > 0) budget_.release(reserved_);
  reserved_ = 0;
}

void HttpSession::close() {
  beast::error_code ignored;
  stream_.socket().shutdown(tcp::socket::shutdown_send, ignored);
}

// After an early answer (413, 408, 503) the client may still be sending: closing with
// unread bytes would reset the connection and could destroy the answer in flight, so
// half-close and discard what arrives for a while (nginx's lingering close).
void HttpSession::linger() {
  close();
  stream_.expires_after(kLinger);
  discard();
}

void HttpSession::discard() {
  stream_.async_read_some(net::buffer(sink_), [self = shared_from_this()](beast::error_code ec, std::size_t) {
    if (!ec) self->discard();
  });
}

}  // namespace chaosbench::bench::serve
