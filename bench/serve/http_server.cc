// The Beast side of the server: an acceptor, and per connection a Session that reads one
// request (with the body limit), hands it to the service, writes the reply and reads
// again while the client keeps the connection alive.
#include "bench/serve/http_server.h"

#include <boost/asio/dispatch.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/strand.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <algorithm>
#include <array>
#include <optional>
#include <stdexcept>
#include <thread>
#include <vector>

namespace chaosbench::bench::serve {
namespace {

namespace beast = boost::beast;
namespace http = beast::http;
namespace net = boost::asio;
using tcp = net::ip::tcp;

class Session : public std::enable_shared_from_this<Session> {
 public:
  Session(tcp::socket&& socket, InferenceService& service, const HttpServerConfig& cfg)
      : stream_(std::move(socket)), service_(service), cfg_(cfg) {}

  void start() {
    net::dispatch(stream_.get_executor(), [self = shared_from_this()] { self->read(); });
  }

 private:
  void read() {
    parser_.emplace();
    parser_->body_limit(cfg_.body_limit);
    stream_.expires_after(cfg_.idle_timeout);
    http::async_read(stream_, buffer_, *parser_,
                     [self = shared_from_this()](beast::error_code ec, std::size_t) { self->on_read(ec); });
  }

  void on_read(beast::error_code ec) {
    if (ec == http::error::body_limit)
      return send(service_.transport_error(413, "request body over the limit of " +
                                                    std::to_string(cfg_.body_limit) + " bytes"),
                  false);
    if (ec == http::error::end_of_stream || ec == beast::error::timeout || ec == net::error::operation_aborted)
      return close();
    if (ec && ec.category() == http::make_error_code(http::error::bad_target).category())  // any HTTP parse error
      return send(service_.transport_error(400, "bad HTTP request: " + ec.message()), false);
    if (ec) return close();
    auto req = parser_->release();
    keep_alive_ = req.keep_alive();
    version_ = req.version();
    stream_.expires_never();
    HttpRequest request{std::string(req.method_string()), std::string(req.target()), std::move(req.body())};
    service_.handle(std::move(request), [self = shared_from_this()](HttpResponse response) {
      // The reply may come from the batching thread: back onto this connection's strand.
      net::post(self->stream_.get_executor(), [self, response = std::move(response)]() mutable {
        self->send(std::move(response), self->keep_alive_);
      });
    });
  }

  void send(HttpResponse response, bool keep_alive) {
    response_ = {};
    response_.version(version_);
    response_.result(static_cast<http::status>(response.status));
    response_.set(http::field::server, "chaosbench");
    response_.set(http::field::content_type, response.content_type);
    response_.keep_alive(keep_alive);
    response_.body() = std::move(response.body);
    response_.prepare_payload();
    http::async_write(stream_, response_, [self = shared_from_this(), keep_alive](beast::error_code ec, std::size_t) {
      if (ec) return self->close();
      if (!keep_alive) return self->linger();
      self->read();
    });
  }

  void close() {
    beast::error_code ignored;
    stream_.socket().shutdown(tcp::socket::shutdown_send, ignored);
  }

  // After an early answer (413, 400) the client may still be sending: closing with unread
  // bytes would reset the connection and could destroy the answer in flight, so half-close
  // and discard what arrives for a while (nginx's lingering close).
  void linger() {
    close();
    stream_.expires_after(std::chrono::seconds(2));
    discard();
  }
  void discard() {
    stream_.async_read_some(net::buffer(sink_), [self = shared_from_this()](beast::error_code ec, std::size_t) {
      if (!ec) self->discard();
    });
  }

  beast::tcp_stream stream_;
  InferenceService& service_;
  const HttpServerConfig& cfg_;
  beast::flat_buffer buffer_;
  std::optional<http::request_parser<http::string_body>> parser_;
  http::response<http::string_body> response_;
  std::array<char, 16384> sink_{};
  bool keep_alive_ = false;
  unsigned version_ = 11;
};

}  // namespace

struct HttpServer::Impl {
  Impl(HttpServerConfig c, InferenceService& s) : cfg(std::move(c)), service(s), acceptor(ioc) {}

  void accept() {
    acceptor.async_accept(net::make_strand(ioc), [this](beast::error_code ec, tcp::socket socket) {
      if (ec == net::error::operation_aborted || !acceptor.is_open()) return;
      if (!ec) std::make_shared<Session>(std::move(socket), service, cfg)->start();
      accept();
    });
  }

  HttpServerConfig cfg;
  InferenceService& service;
  net::io_context ioc;
  tcp::acceptor acceptor;
  std::vector<std::thread> threads;
  unsigned short port = 0;
  bool stopped = false;
};

HttpServer::HttpServer(HttpServerConfig cfg, InferenceService& service)
    : impl_(std::make_unique<Impl>(std::move(cfg), service)) {
  beast::error_code ec;
  const auto address = net::ip::make_address(impl_->cfg.host, ec);
  if (ec) throw std::runtime_error("serve: bad --host \"" + impl_->cfg.host + "\": " + ec.message());
  const tcp::endpoint endpoint(address, impl_->cfg.port);
  auto& acceptor = impl_->acceptor;
  acceptor.open(endpoint.protocol(), ec);
  if (!ec) acceptor.set_option(net::socket_base::reuse_address(true), ec);
  if (!ec) acceptor.bind(endpoint, ec);
  if (!ec) acceptor.listen(net::socket_base::max_listen_connections, ec);
  if (ec)
    throw std::runtime_error("serve: cannot listen on " + impl_->cfg.host + ":" + std::to_string(impl_->cfg.port) +
                             ": " + ec.message());
  impl_->port = acceptor.local_endpoint().port();
  impl_->accept();
  for (int i = 0; i < std::max(1, impl_->cfg.threads); ++i) impl_->threads.emplace_back([this] { impl_->ioc.run(); });
}

HttpServer::~HttpServer() { stop(); }

unsigned short HttpServer::port() const { return impl_->port; }

void HttpServer::stop() {
  if (impl_->stopped) return;
  impl_->stopped = true;
  net::post(impl_->ioc, [this] {
    beast::error_code ignored;
    impl_->acceptor.close(ignored);
  });
  impl_->service.stop();  // queued requests are answered while the io threads still run
  impl_->ioc.stop();
  for (auto& t : impl_->threads) t.join();
}

}  // namespace chaosbench::bench::serve
