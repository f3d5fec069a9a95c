// The LLM server's connection: reading, routing, and the queued answer. See llm_session.h.
#include "bench/llm/serve/llm_session.h"

#include <fmt/format.h>
#include <netinet/in.h>
#include <netinet/tcp.h>

#include <boost/asio/dispatch.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/write.hpp>
#include <algorithm>
#include <ctime>
#include <utility>
#include <nlohmann/json.hpp>

namespace chaosbench::bench::llm {
namespace {

namespace beast = boost::beast;
namespace http = beast::http;
namespace net = boost::asio;

constexpr std::size_t kFirstRead = 4096;       // one read while idle or watching
constexpr auto kLinger = std::chrono::seconds(2);  // an error answer's time to arrive

// One HTTP chunk (RFC 9112 §7.1) holding `data`; empty data would end the body, so never.
std::string chunk(const std::string& data) { return fmt::format("{:x}\r\n{}\r\n", data.size(), data); }

std::string reason(int status) {
  const auto r = http::obsolete_reason(static_cast<http::status>(status));
  return std::string(r.data(), r.size());
}

std::string path_of(std::string_view target) { return std::string(target.substr(0, target.find('?'))); }

OpenAiError error_of(int status, std::string message, std::string type, std::string code = {}) {
  OpenAiError e;
  e.status = status;
  e.message = std::move(message);
  e.type = std::move(type);
  e.code = std::move(code);
  return e;
}

}  // namespace

LlmSession::LlmSession(tcp::socket&& socket, LlmServerShared& shared, bool counted)
    : stream_(std::move(socket)), idle_timer_(stream_.get_executor()), shared_(shared), counted_(counted) {
  // Each SSE event is its own small write: Nagle would hold it for the previous one's ACK.
  beast::error_code ignored;
  stream_.socket().set_option(tcp::no_delay(true), ignored);
}

LlmSession::~LlmSession() {
  release_admission();
  if (counted_) shared_.budget.close();
  if (refusing_) shared_.budget.refused();
}

void LlmSession::start() {
  net::dispatch(stream_.get_executor(), [self = shared_from_this()] { self->next_request(); });
}

void LlmSession::refuse() {
  refusing_ = true;
  net::dispatch(stream_.get_executor(), [self = shared_from_this()] {
    self->send_error(error_of(503,
                              fmt::format("too many connections (the server's limit is {}): try again later",
                                          self->shared_.budget.max_connections()),
                              "server_error"),
                     false);
  });
}

// Between requests: a pipelined request is parsed at once, else the idle wait begins.
void LlmSession::next_request() {
  if (buffer_.size() > 0) {
    if (!watching_) return read_request();
    // The watch is still pending: cancel it (no write is in flight now), then read.
    resume_ = true;
    beast::error_code ignored;
    stream_.socket().cancel(ignored);
    return;
  }
  close_after(shared_.cfg.idle_timeout);
  if (!watching_) watch();
}

void LlmSession::close_after(std::chrono::steady_clock::duration wait) {
  const auto epoch = ++idle_epoch_;
  idle_timer_.expires_after(wait);
  idle_timer_.async_wait([self = shared_from_this(), epoch](beast::error_code ec) {
    // Still the same wait: no request began since (read_request moves the epoch).
    if (ec || epoch != self->idle_epoch_ || self->answering_) return;
    beast::error_code ignored;
    self->stream_.socket().close(ignored);  // the pending watch ends, and the session with it
  });
}

// The one read outside read_request(): the idle wait, the watch over a client during its
// answer, and the drain of a lingering close.
void LlmSession::watch() {
  watching_ = true;
  // No deadline on this read (close_after bounds idle and lingering connections): only the
  // read timer is set, a write in flight keeps its own.
  stream_.expires_never();
  stream_.async_read_some(buffer_.prepare(kFirstRead), [self = shared_from_this()](beast::error_code ec, std::size_t n) {
    self->on_watch(ec, n);
  });
}

void LlmSession::on_watch(beast::error_code ec, std::size_t n) {
  watching_ = false;
  buffer_.commit(n);
  if (resume_) {
    resume_ = false;
    return read_request();
  }
  if (closing_) {
    buffer_.clear();
    if (!ec) return watch();
    idle_timer_.cancel();  // its handler holds the session: let it (and the socket) go now
    return;
  }
  if (ec) {
    if (answering_) return client_gone();
    idle_timer_.cancel();  // idle and the client left: the session (and its socket) ends now
    return;
  }
  if (!answering_) return read_request();
  // A request pipelined behind the one being answered: keep watching while it is small.
  if (buffer_.size() < shared_.cfg.header_limit + shared_.cfg.body_limit) watch();
}

void LlmSession::read_request() {
  ++idle_epoch_;  // no longer idle
  idle_timer_.cancel();
  parser_.emplace();
  parser_->header_limit(static_cast<std::uint32_t>(shared_.cfg.header_limit));
  parser_->body_limit(shared_.cfg.body_limit);
  stream_.expires_after(shared_.cfg.request_timeout);  // past it Beast closes the socket
  http::async_read(stream_, buffer_, *parser_,
                   [self = shared_from_this()](beast::error_code ec, std::size_t) { self->on_read(ec); });
}

void LlmSession::on_read(beast::error_code ec) {
  if (ec == http::error::header_limit)
    return send_error(error_of(431, fmt::format("request header over the limit of {} bytes", shared_.cfg.header_limit),
                               "invalid_request_error"),
                      false);
  if (ec == http::error::body_limit)
    return send_error(error_of(413, fmt::format("request body over the limit of {} bytes", shared_.cfg.body_limit),
                               "invalid_request_error"),
                      false);
  if (ec && ec != http::error::end_of_stream && ec.category() == http::make_error_code(http::error::bad_target).category())
    return send_error(error_of(400, "bad HTTP request: " + ec.message(), "invalid_request_error"), false);
  if (ec) return;  // closed, reset or timed out: the socket closes with the session
  stream_.expires_never();
  auto req = parser_->release();
  keep_alive_ = req.keep_alive();
  version_ = req.version();
  route(req);
}

void LlmSession::route(const http::request<http::string_body>& req) {
  const std::string path = path_of(std::string_view(req.target().data(), req.target().size()));
  const bool get = req.method() == http::verb::get;
  const bool post = req.method() == http::verb::post;
  auto wrong_method = [&](const char* allowed) {
    send_error(error_of(405, fmt::format("{} {}: method not allowed (use {})", std::string(req.method_string()), path,
                                         allowed),
                        "invalid_request_error", "method_not_allowed"),
               keep_alive_);
  };
  if (path == "/v1/completions" || path == "/v1/chat/completions") {
    if (!post) return wrong_method("POST");
    return completion(path == "/v1/completions" ? OpenAiEndpoint::kCompletions : OpenAiEndpoint::kChatCompletions,
                      req.body());
  }
  if (path == "/health") return get ? send(200, "text/plain", "", keep_alive_) : wrong_method("GET");
  if (path == "/metrics") {
    if (!get) return wrong_method("GET");
    const TokenEngine& e = *shared_.engine;
    return send(200, "text/plain; version=0.0.4",
                shared_.metrics.prometheus(shared_.cfg.model,
                                           {e.running(), e.waiting(), e.kv_cache_usage(), e.preemptions()}),
                keep_alive_);
  }
  if (path == "/v1/models") {
    if (!get) return wrong_method("GET");
    const nlohmann::json models = {
        {"object", "list"},
        {"data", nlohmann::json::array({{{"id", shared_.cfg.model}, {"object", "model"}, {"created", 0},
                                          {"owned_by", "chaosbench"}, {"max_model_len", shared_.cfg.context_tokens}}})}};
    return send(200, "application/json", models.dump(), keep_alive_);
  }
  send_error(error_of(404, "no such path: " + path, "invalid_request_error", "not_found"), keep_alive_);
}

bool LlmSession::admit() {
  auto now = shared_.running.load();
  do {
    if (now >= shared_.cfg.max_running) return false;
  } while (!shared_.running.compare_exchange_weak(now, now + 1));
  admitted_ = true;
  return true;
}

void LlmSession::release_admission() {
  if (admitted_) shared_.running.fetch_sub(1);
  admitted_ = false;
}

void LlmSession::completion(OpenAiEndpoint endpoint, const std::string& body) {
  const auto arrival = TokenEngine::Clock::now();
  auto parsed = parse_request(endpoint, body, shared_.limits);
  if (parsed.error) return send_error(*parsed.error, keep_alive_);
  const CompletionRequest& request = *parsed.request;
  if (!admit()) {
    shared_.metrics.count_rejected();
    return send_error(error_of(429, fmt::format("the server runs {} requests at most: try again later",
                                                shared_.cfg.max_running),
                               "rate_limit_error", "rate_limit_exceeded"),
                      keep_alive_);
  }
  shared_.metrics.add_prompt_tokens(request.prompt.size());
  answering_ = true;
  finished_ = false;
  streaming_ = request.stream;
  include_usage_ = request.include_usage;
  text_.clear();
  utf8_held_.clear();
  errored_ = false;
  writer_.emplace(endpoint, request.model, shared_.next_id.fetch_add(1), static_cast<std::int64_t>(std::time(nullptr)));
  const auto epoch = ++epoch_;
  auto strand = stream_.get_executor();
  auto self = shared_from_this();
  TokenSink sink{
      [self, strand, epoch](std::string_view text) {
        net::post(strand, [self, epoch, t = std::string(text)] { self->on_token(epoch, t); });
      },
      [self, strand, epoch](FinishReason reason, Usage usage) {
        net::post(strand, [self, epoch, reason, usage] { self->on_finish(epoch, reason, usage); });
      }};
  auto generation = shared_.engine->start(request, arrival, std::move(sink));
  if (!generation) {  // the engine's queue is full
    answering_ = false;
    writer_.reset();
    release_admission();
    shared_.metrics.count_rejected();
    return send_error(error_of(429, "the server's queue is full: try again later", "rate_limit_error",
                               "rate_limit_exceeded"),
                      keep_alive_);
  }
  generation_ = generation;
  generating_ = true;
  arrival_ = arrival;
  tokens_sent_ = 0;
  // The head goes out after start(): a client that sees it finds its request counted.
  if (streaming_) {
    if (version_ < 11) keep_alive_ = false;  // HTTP/1.0 has no chunks: the body ends at close
    enqueue(head(200, "text/event-stream", std::nullopt));
  }
  if (!watching_) watch();
}

void LlmSession::on_token(std::uint64_t epoch, const std::string& text) {
  if (epoch != epoch_ || !answering_) return;  // an abandoned answer's late token
  shared_.metrics.add_generation_tokens(1);
  last_token_ = TokenEngine::Clock::now();
  if (tokens_sent_++ == 0) {
    first_token_ = last_token_;
    shared_.metrics.observe_ttft(std::chrono::duration<double>(first_token_ - arrival_).count());
  }
  if (!streaming_) {
    text_ += text;
    return;
  }
  stream_text(text);
}

namespace {

// How much of `s` is whole UTF-8 characters: all of it, unless it ends inside a character
// that may still be completed (a lead byte and fewer continuation bytes than it needs).
// Bytes that can never be a character are not held: the writer replaces them.
std::size_t complete_utf8(std::string_view s) {
  for (std::size_t back = 1; back <= std::min<std::size_t>(3, s.size()); ++back) {
    const auto c = static_cast<unsigned char>(s[s.size() - back]);
    if ((c & 0xC0) == 0x80) continue;  // a continuation byte: look further back
    const std::size_t need = (c & 0xE0) == 0xC0 ? 2 : (c & 0xF0) == 0xE0 ? 3 : (c & 0xF8) == 0xF0 ? 4 : 1;
    return need > back ? s.size() - back : s.size();
  }
  return s.size();
}

}  // namespace

// One SSE event per token, except that a character split over byte tokens waits for its
// last byte; on_finish flushes what is held.
void LlmSession::stream_text(std::string_view text) {
  utf8_held_ += text;
  const std::size_t n = complete_utf8(utf8_held_);
  if (n == 0) return;
  const std::string event = writer_->token_event(std::string_view(utf8_held_).substr(0, n));
  utf8_held_.erase(0, n);
  enqueue(version_ < 11 ? event : chunk(event));
}

void LlmSession::on_finish(std::uint64_t epoch, FinishReason reason, const Usage& usage) {
  if (epoch != epoch_ || !answering_) return;
  generation_.reset();
  generating_ = false;
  finished_ = true;
  if (tokens_sent_ > 1)
    shared_.metrics.observe_tpot(std::chrono::duration<double>(last_token_ - first_token_).count() /
                                 static_cast<double>(tokens_sent_ - 1));
  if (reason == FinishReason::kError) return finish_with_error();
  if (!streaming_) {
    const std::string body = writer_->whole(text_, reason, usage);
    return enqueue(head(200, "application/json", body.size()) + body);
  }
  std::string events;
  if (!utf8_held_.empty()) events = writer_->token_event(std::exchange(utf8_held_, std::string()));
  events += writer_->finish_event(reason);
  if (include_usage_) events += writer_->usage_event(usage);
  events += ResponseWriter::done_event();
  enqueue(version_ < 11 ? events : chunk(events) + "0\r\n\r\n");
}

// The engine failed mid-answer: a whole answer becomes a 500 error object; a stream, whose
// 200 head is gone, gets the error object as its last event before [DONE].
void LlmSession::finish_with_error() {
  errored_ = true;
  OpenAiError error;
  error.status = 500;
  error.type = "server_error";
  error.code = "engine_failure";
  error.message = "The engine failed while generating this answer (a device error)";
  if (!streaming_) return enqueue(head(error.status, "application/json", error.json().size()) + error.json());
  const std::string events = "data: " + error.json() + "\n\n" + ResponseWriter::done_event();
  enqueue(version_ < 11 ? events : chunk(events) + "0\r\n\r\n");
}

void LlmSession::send(int status, const char* content_type, const std::string& body, bool keep_alive) {
  keep_alive_ = keep_alive;
  answering_ = true;
  finished_ = true;
  ++epoch_;
  enqueue(head(status, content_type, body.size()) + body);
}

void LlmSession::send_error(const OpenAiError& error, bool keep_alive) {
  send(error.status, "application/json", error.json(), keep_alive);
}

std::string LlmSession::head(int status, const char* content_type, std::optional<std::size_t> length) const {
  std::string out = fmt::format("HTTP/1.{} {} {}\r\nServer: chaosbench\r\nContent-Type: {}\r\n", version_ < 11 ? 0 : 1,
                                status, reason(status),
                                content_type);
  if (length) out += fmt::format("Content-Length: {}\r\n", *length);
  else if (version_ >= 11) out += "Cache-Control: no-cache\r\nTransfer-Encoding: chunked\r\n";
  else out += "Cache-Control: no-cache\r\n";
  if (!keep_alive_) out += "Connection: close\r\n";
  else if (version_ < 11) out += "Connection: keep-alive\r\n";
  return out + "\r\n";
}

void LlmSession::enqueue(std::string bytes) {
  pending_ += bytes;
  if (!writing_) write_next();
}

void LlmSession::write_next() {
  if (pending_.empty()) {
    // Between writes no timeout runs: the engine's pace bounds a generation, not the client.
    stream_.expires_never();
    if (finished_ && answering_) after_answer();
    return;
  }
  inflight_.swap(pending_);
  pending_.clear();
  writing_ = true;
  // A client that does not read its answer loses the connection after request_timeout.
  stream_.expires_after(shared_.cfg.request_timeout);
  net::async_write(stream_, net::buffer(inflight_), [self = shared_from_this()](beast::error_code ec, std::size_t) {
    self->writing_ = false;
    if (ec) return self->client_gone();
    self->write_next();
  });
}

void LlmSession::after_answer() {
  const bool answered = !generating_ && admitted_ && !errored_;  // a completion, in full
  answering_ = false;
  writer_.reset();
  if (answered) shared_.metrics.count_success();
  release_admission();
  if (!keep_alive_) return linger();
  next_request();
}

// The client left (or stopped reading) mid-answer: free its generation and its slot now.
void LlmSession::client_gone() {
  if (!answering_) return;
  answering_ = false;
  ++epoch_;
  if (generating_) {
    if (auto g = generation_.lock()) g->cancel();
    generation_.reset();
    generating_ = false;
    shared_.metrics.count_cancelled();
  }
  release_admission();
  closing_ = true;
  beast::error_code ignored;
  stream_.socket().shutdown(tcp::socket::shutdown_both, ignored);
  stream_.socket().close(ignored);
}

// After an answer that closes the connection the client may still be sending: closing
// with unread bytes would reset the connection and could destroy the answer in flight,
// so half-close and discard what arrives for a while.
void LlmSession::linger() {
  closing_ = true;
  beast::error_code ignored;
  stream_.socket().shutdown(tcp::socket::shutdown_send, ignored);
  close_after(kLinger);
  buffer_.clear();
  if (!watching_) watch();
}

}  // namespace chaosbench::bench::llm
