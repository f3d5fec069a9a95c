// One accepted HTTP/1.1 connection of HttpServer (Beast; included only by the server's
// .cc files). A request is read in three bounded steps: its first byte within
// idle_timeout (else a silent close), the header within header_limit bytes (else 431),
// then the body within body_limit (else 413) and within the connection budget's buffered
// bytes (else 503); header and body together must arrive within request_timeout (else
// 408). Every error answer closes the connection (lingering, so the answer arrives).
// Threads: all work runs on the connection's strand; the session keeps itself alive
// through its pending handlers.
#pragma once

#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <array>
#include <memory>
#include <optional>

#include "bench/serve/connection_budget.h"
#include "bench/serve/http_server.h"
#include "bench/serve/inference_service.h"

namespace chaosbench::bench::serve {

class HttpSession : public std::enable_shared_from_this<HttpSession> {
 public:
  using tcp = boost::asio::ip::tcp;
  // counted: this connection holds one of the budget's slots (released on destruction).
  HttpSession(tcp::socket&& socket, InferenceService& service, const HttpServerConfig& cfg,
              ConnectionBudget& budget, bool counted);
  ~HttpSession();
  HttpSession(const HttpSession&) = delete;
  HttpSession& operator=(const HttpSession&) = delete;

  void start();
  // Answers 503 "too many connections" and closes (the session holds a refusal slot).
  void refuse();

 private:
  void read_request();
  void read_header();
  void on_header(boost::beast::error_code ec);
  void on_body(boost::beast::error_code ec);
  void on_error(boost::beast::error_code ec);
  void fail(int status, const std::string& message);
  void send(HttpResponse response, bool keep_alive);
  void release_body();
  void close();
  void linger();
  void discard();

  boost::beast::tcp_stream stream_;
  boost::asio::steady_timer deadline_;
  InferenceService& service_;
  const HttpServerConfig& cfg_;
  ConnectionBudget& budget_;
  bool counted_;
  bool refusing_ = false;
  bool timed_out_ = false;
  std::uint64_t reserved_ = 0;  // body bytes reserved in budget_
  boost::beast::flat_buffer buffer_;
  std::optional<boost::beast::http::request_parser<boost::beast::http::string_body>> parser_;
  boost::beast::http::response<boost::beast::http::string_body> response_;
  std::array<char, 16384> sink_{};
  bool keep_alive_ = false;
  unsigned version_ = 11;
};

}  // namespace chaosbench::bench::serve
