// The listener's Beast side (metrics_listener.h): an acceptor and one small connection
// object per client, all on one io_context run by one thread.
#include "harness/prometheus/metrics_listener.h"

#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <chrono>
#include <optional>
#include <spdlog/spdlog.h>
#include <stdexcept>
#include <thread>

namespace chaosbench::harness::prometheus {
namespace {

namespace beast = boost::beast;
namespace bhttp = beast::http;  // not "http": harness/http is chaosbench::harness::http
namespace net = boost::asio;
using tcp = net::ip::tcp;

constexpr std::size_t kHeaderLimit = 8u << 10;
constexpr std::size_t kMaxConnections = 32;
constexpr auto kRequestTimeout = std::chrono::seconds(10);
constexpr auto kAcceptPause = std::chrono::milliseconds(100);
constexpr const char* kContentType = "text/plain; version=0.0.4; charset=utf-8";

}  // namespace

struct MetricsListener::Impl {
  explicit Impl(Render r) : render(std::move(r)) {}
  void accept();

  // Destroyed in reverse: the io_context (and the connections its handlers hold, which
  // count themselves out of `open`) before the counter.
  Render render;
  std::size_t open = 0;  // connections alive; touched only on the io thread
  net::io_context ioc{1};
  tcp::acceptor acceptor{ioc};
  net::steady_timer pause{ioc};  // accept() after a failure
  std::string address;
  unsigned short port = 0;
  std::thread thread;
  bool stopped = false;
};

namespace {

// One client: read a request, answer, and read the next while it keeps the connection.
class Connection : public std::enable_shared_from_this<Connection> {
 public:
  Connection(tcp::socket socket, const MetricsListener::Render& render, std::size_t& open)
      : stream_(std::move(socket)), render_(render), open_(open) {
    ++open_;
  }
  ~Connection() { --open_; }

  void read() {
    parser_.emplace();
    parser_->header_limit(kHeaderLimit);
    parser_->body_limit(0);
    stream_.expires_after(kRequestTimeout);
    bhttp::async_read(stream_, buffer_, *parser_,
                     [self = shared_from_this()](beast::error_code ec, std::size_t) { self->on_read(ec); });
  }

 private:
  void on_read(beast::error_code ec) {
    if (ec && !parse_error(ec)) return close();  // the client left or stalled, or the socket failed
    if (ec) return answer(bhttp::status::bad_request, "bad request\n", false);
    const auto& req = parser_->get();
    const std::string_view target(req.target().data(), req.target().size());
    if (target.substr(0, target.find('?')) != "/metrics")
      return answer(bhttp::status::not_found, "not found; try /metrics\n", req.keep_alive());
    if (req.method() != bhttp::verb::get)
      return answer(bhttp::status::method_not_allowed, "only GET\n", req.keep_alive());
    std::string body;
    try {
      body = render_();
    } catch (const std::exception& e) {
      spdlog::warn("--metrics-listen: rendering the exposition failed: {}", e.what());
      return answer(bhttp::status::internal_server_error, "rendering failed\n", false);
    }
    answer(bhttp::status::ok, std::move(body), req.keep_alive());
  }

  // A request that arrived and does not parse (bad syntax, headers over the bound, a
  // body), as opposed to one that never came whole.
  static bool parse_error(const beast::error_code& ec) {
    return ec.category() == bhttp::make_error_code(bhttp::error::bad_method).category() &&
           ec != bhttp::error::end_of_stream && ec != bhttp::error::partial_message;
  }

  void answer(bhttp::status status, std::string body, bool keep_alive) {
    response_ = {};
    response_.result(status);
    response_.version(11);
    response_.set(bhttp::field::content_type, status == bhttp::status::ok ? kContentType : "text/plain; charset=utf-8");
    if (status == bhttp::status::method_not_allowed) response_.set(bhttp::field::allow, "GET");
    response_.body() = std::move(body);
    response_.prepare_payload();
    response_.keep_alive(keep_alive);
    stream_.expires_after(kRequestTimeout);
    bhttp::async_write(stream_, response_, [self = shared_from_this(), keep_alive](beast::error_code e, std::size_t) {
      if (e || !keep_alive) return self->close();
      self->read();
    });
  }

  void close() {
    beast::error_code ignored;
    stream_.socket().shutdown(tcp::socket::shutdown_both, ignored);
    stream_.close();
  }

  beast::tcp_stream stream_;
  beast::flat_buffer buffer_{kHeaderLimit * 2};  // a bound: a request never grows it past this
  std::optional<bhttp::request_parser<bhttp::empty_body>> parser_;
  bhttp::response<bhttp::string_body> response_;
  const MetricsListener::Render& render_;
  std::size_t& open_;
};

}  // namespace

void MetricsListener::Impl::accept() {
  acceptor.async_accept([this](beast::error_code ec, tcp::socket socket) {
    if (ec == net::error::operation_aborted || !acceptor.is_open()) return;
    if (!ec) {
      if (open < kMaxConnections) std::make_shared<Connection>(std::move(socket), render, open)->read();
      return accept();  // over the bound the socket closes here
    }
    // Out of descriptors (or another failure) the listening socket stays readable:
    // accepting again at once would spin, so wait a little first.
    pause.expires_after(kAcceptPause);
    pause.async_wait([this](beast::error_code e) {
      if (!e) accept();
    });
  });
}

MetricsListener::MetricsListener(const ListenAddress& address, Render render)
    : impl_(std::make_unique<Impl>(std::move(render))) {
  beast::error_code ec;
  const tcp::endpoint endpoint(net::ip::make_address(address.host, ec), address.port);
  auto& acceptor = impl_->acceptor;
  if (!ec) acceptor.open(endpoint.protocol(), ec);
  if (!ec) acceptor.set_option(net::socket_base::reuse_address(true), ec);  // a past run's TIME_WAIT
  if (!ec) acceptor.bind(endpoint, ec);
  if (!ec) acceptor.listen(net::socket_base::max_listen_connections, ec);
  if (ec) throw std::runtime_error("cannot listen on " + address.to_string() + ": " + ec.message());
  impl_->port = acceptor.local_endpoint().port();
  impl_->address = ListenAddress{address.host, impl_->port}.to_string();
  impl_->accept();
  impl_->thread = std::thread([this] { impl_->ioc.run(); });
}

MetricsListener::~MetricsListener() { stop(); }

unsigned short MetricsListener::port() const { return impl_->port; }

std::string MetricsListener::address() const { return impl_->address; }

void MetricsListener::stop() {
  if (impl_->stopped) return;
  impl_->stopped = true;
  impl_->ioc.stop();
  impl_->thread.join();
  beast::error_code ignored;
  impl_->acceptor.close(ignored);  // the io thread is gone: no handler runs concurrently
}

}  // namespace chaosbench::harness::prometheus
