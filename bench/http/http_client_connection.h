// The HTTP client core's connection: one non-blocking TCP connection to one server,
// carrying one request at a time and kept alive between requests when the server allows
// (both load generators' sockets, through the open-loop engine). Registered with the
// caller's epoll set, level-triggered, with the caller's id as the epoll data; the caller
// hands it each readiness event. It sends the prepared request bytes, then parses the
// answer as it arrives (http_response_reader.h) and tells the request's sink
// (http_response_sink.h) the head and each piece of the body with the time the read
// returned, so timestamps are taken as bytes arrive.
//
// Failures are events, never exceptions: a connect that failed or a peer that closed
// before any byte of the answer (kNoAnswer, with reused() saying whether the socket was
// open before the request: an idle keep-alive close racing it, safe to resend), an answer
// cut or malformed (kBroken, error() says how). Bounded against a hostile server by the
// reader's limits; it keeps no body. The connect itself has no timer here: the caller's
// deadline for the request bounds it (close() abandons it).
// Threads: the caller's loop thread only. No call blocks.
#pragma once

#include <chrono>
#include <cstdint>
#include <string_view>

#include "bench/http/http_client_endpoint.h"
#include "bench/http/http_response_reader.h"
#include "bench/http/http_response_sink.h"

namespace chaosbench::bench::http {

class HttpClientConnection {
 public:
  using Clock = std::chrono::steady_clock;
  // How an exchange went; every event but kNone leaves the connection idle.
  enum class Event {
    kNone,      // nothing ended (an idle socket's news is handled quietly: it is closed)
    kComplete,  // the response ended well; response() holds its head; open when reusable
    kStopped,   // the sink ended the exchange (its on_head or on_body said false); closed
    kNoAnswer,  // the connect failed, or the peer closed or reset before any answer byte; closed
    kBroken,    // the answer began but was cut or is malformed (error()); closed
  };

  HttpClientConnection(int epoll_fd, std::uint32_t id, HttpResponseReader::Limits limits = {});
  ~HttpClientConnection();
  HttpClientConnection(const HttpClientConnection&) = delete;
  HttpClientConnection& operator=(const HttpClientConnection&) = delete;

  bool open() const { return fd_ >= 0; }
  bool busy() const { return sink_ != nullptr; }
  bool connecting() const { return connecting_; }
  // Whether the socket was open before the current request (kept alive, or opened in
  // advance): a kNoAnswer then is the server closing an idle socket as the request went out.
  bool reused() const { return reused_; }

  // Opens the socket with no request (a warm-up, so the first requests' latencies do not
  // include the handshake). False when that failed at once.
  bool preconnect(const HttpClientEndpoint::Address& to);
  // Sends `request` (its bytes must stay valid until the exchange ends), connecting to `to`
  // first when closed; `sink` hears the answer. kNone: under way; kNoAnswer: failed at once.
  Event start(std::string_view request, const HttpClientEndpoint::Address& to, HttpResponseSink& sink);
  // Handles epoll `events`: at most one read of up to `size` bytes into `buffer` (the
  // caller's, shared: level-triggered epoll calls again for the rest).
  Event on_ready(std::uint32_t events, char* buffer, std::size_t size);
  // When the last event on_ready returned happened: the return of the read that brought
  // it, or the moment a failure without one was seen (a refused connect, a failed send).
  Clock::time_point event_time() const { return event_time_; }
  // The last answer's head (valid after kComplete until the next start()).
  const HttpResponseReader& response() const { return response_; }
  // After kBroken: HttpResponseReader::Error::kTruncated when cut, another when malformed.
  HttpResponseReader::Error error() const { return response_.error(); }
  // Closes the socket; an exchange in flight is abandoned (its sink hears nothing more).
  void close();

 private:
  bool connect_to(const HttpClientEndpoint::Address& to);
  bool connect_ended(std::uint32_t events);
  bool write_some(Clock::time_point now);  // false on a socket error
  void watch_writes(bool on);
  Event on_bytes(std::string_view bytes, Clock::time_point at);
  Event on_eof();  // the peer closed or reset the socket
  Event complete(bool more_bytes);
  Event fail(Event event) {  // ends the exchange with `event`, closing the socket
    close();
    return event;
  }

  int epoll_fd_;
  std::uint32_t id_;
  int fd_ = -1;
  bool connecting_ = false;
  bool watching_writes_ = false;
  bool reused_ = false;
  bool any_byte_ = false;  // of the current answer
  std::string_view request_;
  std::size_t written_ = 0;
  HttpResponseSink* sink_ = nullptr;
  Clock::time_point event_time_{};
  HttpResponseReader response_;
};

}  // namespace chaosbench::bench::http
