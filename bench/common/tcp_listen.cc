// listen_tcp. See tcp_listen.h.
#include "bench/common/tcp_listen.h"

#include <stdexcept>

namespace chaosbench::bench {

unsigned short listen_tcp(boost::asio::ip::tcp::acceptor& acceptor, const std::string& host, unsigned short port,
                          const std::string& who) {
  namespace net = boost::asio;
  const std::string prefix = who.empty() ? "" : who + ": ";
  boost::system::error_code ec;
  const auto address = net::ip::make_address(host, ec);
  if (ec) throw std::runtime_error(prefix + "bad --host \"" + host + "\": " + ec.message());
  const net::ip::tcp::endpoint endpoint(address, port);
  acceptor.open(endpoint.protocol(), ec);
  if (!ec) acceptor.set_option(net::socket_base::reuse_address(true), ec);
  if (!ec) acceptor.bind(endpoint, ec);
  if (!ec) acceptor.listen(net::socket_base::max_listen_connections, ec);
  if (!ec) acceptor.native_non_blocking(true, ec);
  if (ec) {
    const std::string shown = address.is_v6() ? "[" + host + "]" : host;
    throw std::runtime_error(prefix + "cannot listen on " + shown + ":" + std::to_string(port) + ": " + ec.message());
  }
  return acceptor.local_endpoint().port();
}

}  // namespace chaosbench::bench
