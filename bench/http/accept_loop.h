// The accept loop of HttpServerCore (http_server_core.h): admits each connection under a
// ConnectionBudget and hands it on, counted or to be refused (503), dropping it when even
// refusals are over their bound. Out of descriptors it gives a spare descriptor back,
// accepts and drops one waiting client (it hears a close instead of hanging in the
// backlog), then pauses before accepting again, so it never spins on a readable listener.
// Threads: the acceptor, its back-off timer and stop()'s close run on one strand of the
// io_context; `on_connection` runs there too. start(), stop() and close() from the owner's
// thread.
#pragma once

#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/strand.hpp>
#include <functional>
#include <string>

#include "bench/http/connection_budget.h"

namespace chaosbench::bench::http {

class AcceptLoop {
 public:
  using tcp = boost::asio::ip::tcp;
  // counted: the connection holds a budget slot; false: it is to be answered 503 and closed
  // (it holds a refusal slot).
  using OnConnection = std::function<void(tcp::socket&& socket, bool counted)>;

  AcceptLoop(boost::asio::io_context& ioc, ConnectionBudget& budget, OnConnection on_connection);
  ~AcceptLoop();
  AcceptLoop(const AcceptLoop&) = delete;
  AcceptLoop& operator=(const AcceptLoop&) = delete;

  // Binds and listens (listen_tcp: throws std::runtime_error "<who>: ..."), then starts
  // accepting once the io_context runs. Returns the bound port.
  unsigned short start(const std::string& host, unsigned short port, const std::string& who);
  // Closes the acceptor and cancels a back-off, on the strand (posted: call before the
  // io_context stops). Idempotent.
  void stop();
  // Closes the acceptor at once: only once no thread runs the io_context. Idempotent.
  void close();

 private:
  void accept();
  void on_accept_error(const boost::system::error_code& ec);

  boost::asio::io_context& ioc_;
  ConnectionBudget& budget_;
  OnConnection on_connection_;
  boost::asio::strand<boost::asio::io_context::executor_type> strand_;
  tcp::acceptor acceptor_;
  boost::asio::steady_timer pause_;  // accept() back-off
  int reserve_fd_;                   // the spare descriptor given back when out of them
};

}  // namespace chaosbench::bench::http
