// One accepted connection of LlmHttpServer (Beast; included only by the server's .cc
// files), and the state all its connections share. A request is read whole within
// header_limit (else 431), body_limit (else 413) and request_timeout (else a close); the
// answer is written by hand-framed bytes: a head, then either a Content-Length body or
// (streaming) one HTTP chunk per SSE event, queued so a slow reader never blocks the
// engine. While an answer is generated a read stays pending: end of file or an error
// there is a client that left, and its generation is cancelled at once.
// Threads: all work runs on the connection's strand; the engine's sink calls are posted
// onto it. The session keeps itself alive through its pending handlers and its sink.
#pragma once

#include <atomic>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "bench/llm/serve/llm_http_server.h"
#include "bench/llm/openai_response.h"
#include "bench/http/connection_budget.h"

namespace chaosbench::bench::llm {

struct LlmServerShared {
  LlmServerShared(const LlmServerConfig& c)
      : cfg(c), limits{{c.model}, c.context_tokens, c.body_limit}, budget(c.max_connections, 1ull << 62) {}
  const LlmServerConfig& cfg;
  RequestLimits limits;
  TokenEngine* engine = nullptr;
  LlmServerMetrics metrics;
  bench::http::ConnectionBudget budget;  // connections only: bodies are bounded by body_limit
  std::atomic<std::size_t> running{0};
  std::atomic<std::uint64_t> next_id{1};
};

class LlmSession : public std::enable_shared_from_this<LlmSession> {
 public:
  using tcp = boost::asio::ip::tcp;
  // counted: this connection holds one of the budget's slots (released on destruction).
  LlmSession(tcp::socket&& socket, LlmServerShared& shared, bool counted);
  ~LlmSession();
  LlmSession(const LlmSession&) = delete;
  LlmSession& operator=(const LlmSession&) = delete;

  void start();
  void refuse();  // 503 "too many connections", then close

 private:
  void next_request();
  // Closes the socket after `wait` unless a request begins first (idle keep-alive, linger).
  void close_after(std::chrono::steady_clock::duration wait);
  void watch();
  void on_watch(boost::beast::error_code ec, std::size_t n);
  void read_request();
  void on_read(boost::beast::error_code ec);
  void route(const boost::beast::http::request<boost::beast::http::string_body>& req);
  void completion(OpenAiEndpoint endpoint, const std::string& body);
  bool admit();
  void on_token(std::uint64_t epoch, const std::string& text);
  void stream_text(std::string_view text);
  void on_finish(std::uint64_t epoch, FinishReason reason, const Usage& usage);
  void finish_with_error();
  void send(int status, const char* content_type, const std::string& body, bool keep_alive);
  void send_error(const OpenAiError& error, bool keep_alive);
  std::string head(int status, const char* content_type, std::optional<std::size_t> length) const;
  void enqueue(std::string bytes);
  void write_next();
  void after_answer();
  void client_gone();
  void release_admission();
  void linger();

  boost::beast::tcp_stream stream_;
  // Closes a keep-alive connection idle past idle_timeout, or a lingering one. Its own
  // timer: the watch read pending between requests runs without a deadline (a Beast stream's timeout binds an
  // operation when it starts, so the answer's write timeout must not end up on it).
  boost::asio::steady_timer idle_timer_;
  std::uint64_t idle_epoch_ = 0;  // an idle wait still current
  LlmServerShared& shared_;
  bool counted_;
  bool refusing_ = false;
  boost::beast::flat_buffer buffer_;
  std::optional<boost::beast::http::request_parser<boost::beast::http::string_body>> parser_;
  bool watching_ = false;   // a read is pending outside of read_request()
  bool answering_ = false;  // a request is being answered (its bytes not all written yet)
  bool finished_ = false;   // the answer's last bytes are queued
  bool closing_ = false;    // no more requests: discard what arrives
  bool resume_ = false;     // the watch was cancelled to read a pipelined request
  bool admitted_ = false;   // holds one of shared_.running
  bool keep_alive_ = false;
  bool streaming_ = false;
  bool include_usage_ = false;
  unsigned version_ = 11;
  std::uint64_t epoch_ = 0;  // per answer: sink calls of an abandoned answer are dropped
  std::optional<ResponseWriter> writer_;
  // Weak: the generation's pending timer holds it, and it holds this session through the
  // sink; a strong pointer here would make a cycle that outlives the io_context.
  std::weak_ptr<Generation> generation_;
  bool generating_ = false;  // started, neither finished nor cancelled
  TokenEngine::Clock::time_point arrival_, first_token_, last_token_;  // for the latency histograms
  std::uint64_t tokens_sent_ = 0;
  std::string text_;      // not streaming: the answer so far
  // Streaming: bytes of a UTF-8 character whose rest is still to come (a byte-level token
  // is one byte), held so each event carries whole characters, as an incremental
  // detokenizer does; a whole answer and a stream then read the same.
  std::string utf8_held_;
  bool errored_ = false;  // the engine failed this answer (not a success)
  std::string pending_;   // bytes queued behind the write in flight
  std::string inflight_;  // bytes being written
  bool writing_ = false;
};

}  // namespace chaosbench::bench::llm
