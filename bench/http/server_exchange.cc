// ServerExchange: each call dispatched onto its connection's strand. See the header.
#include "bench/http/server_exchange.h"

#include <boost/asio/dispatch.hpp>
#include <boost/asio/post.hpp>

#include "bench/http/server_session.h"

namespace chaosbench::bench::http {

void ServerExchange::respond(ServerResponse response) const {
  boost::asio::dispatch(session_->executor(), [s = session_, a = answer_, r = std::move(response)]() mutable {
    s->respond(a, std::move(r));
  });
}

void ServerExchange::begin_stream(int status, std::string content_type) const {
  boost::asio::dispatch(session_->executor(), [s = session_, a = answer_, status, t = std::move(content_type)] {
    s->begin_stream(a, status, t);
  });
}

void ServerExchange::stream(std::string data) const {
  boost::asio::dispatch(session_->executor(), [s = session_, a = answer_, d = std::move(data)] { s->stream(a, d); });
}

void ServerExchange::end_stream(std::string data) const {
  boost::asio::dispatch(session_->executor(), [s = session_, a = answer_, d = std::move(data)] { s->end_stream(a, d); });
}

void ServerExchange::on_finished(std::function<void(bool delivered)> finished) const {
  boost::asio::dispatch(session_->executor(), [s = session_, a = answer_, f = std::move(finished)]() mutable {
    s->on_finished(a, std::move(f));
  });
}

void ServerExchange::post(std::function<void()> fn) const { boost::asio::post(session_->executor(), std::move(fn)); }

}  // namespace chaosbench::bench::http
