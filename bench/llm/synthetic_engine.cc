// The synthetic engine's timer chain. See synthetic_engine.h.
#include "bench/llm/synthetic_engine.h"

#include <algorithm>
#include <array>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/strand.hpp>

namespace chaosbench::bench::llm {
namespace {

namespace net = boost::asio;

constexpr std::array<std::string_view, 16> kWords = {
    " the", " quick", " brown", " fox", " jumps", " over", " a", " lazy",
    " dog", " and", " runs", " far", " into", " green", " hills", " today"};

// One request's chain: a timer re-armed per token on the strand; the handlers hold the
// chain alive until it finishes or is cancelled.
class SyntheticGeneration : public Generation, public std::enable_shared_from_this<SyntheticGeneration> {
 public:
  SyntheticGeneration(net::io_context& ioc, std::atomic<std::size_t>& active, TokenSink sink,
                      TokenEngine::Clock::time_point first, std::chrono::nanoseconds cadence, int count, Usage usage,
                      FinishReason reason)
      : strand_(net::make_strand(ioc)), timer_(strand_), active_(active), sink_(std::move(sink)), first_(first),
        cadence_(cadence), count_(count), usage_(usage), reason_(reason) {
    active_.fetch_add(1);
  }
  ~SyntheticGeneration() override { release(); }

  void run() {
    net::post(strand_, [self = shared_from_this()] { self->schedule(); });
  }

  void cancel() override {
    net::post(strand_, [self = shared_from_this()] {
      self->timer_.cancel();
      self->release();
    });
  }

 private:
  void schedule() {
    if (released_) return;
    if (next_ == count_) return finish();
    timer_.expires_at(first_ + next_ * cadence_);  // absolute: no drift
    timer_.async_wait([self = shared_from_this()](const boost::system::error_code& ec) {
      if (ec || self->released_) return;
      self->sink_.on_token(SyntheticEngine::token_text(self->next_));
      ++self->next_;
      self->schedule();
    });
  }

  void finish() {
    auto sink = std::move(sink_);
    release();
    sink.on_finish(reason_, usage_);
  }

  // Frees the slot and the sink (which may hold the client's session) exactly once.
  void release() {
    if (released_) return;
    released_ = true;
    sink_ = {};
    active_.fetch_sub(1);
  }

  net::strand<net::io_context::executor_type> strand_;
  net::steady_timer timer_;
  std::atomic<std::size_t>& active_;
  TokenSink sink_;
  TokenEngine::Clock::time_point first_;
  std::chrono::nanoseconds cadence_;
  int count_;
  int next_ = 0;
  Usage usage_;
  FinishReason reason_;
  bool released_ = false;  // touched only on the strand (and in the destructor)
};

}  // namespace

int SyntheticEngine::token_count(const CompletionRequest& request) const {
  if (request.ignore_eos || timing_.tokens <= 0) return request.max_tokens;
  return std::min(timing_.tokens, request.max_tokens);
}

std::string_view SyntheticEngine::token_text(int i) { return kWords[static_cast<std::size_t>(i) % kWords.size()]; }

std::shared_ptr<Generation> SyntheticEngine::start(const CompletionRequest& request, Clock::time_point arrival,
                                                   TokenSink sink) {
  const int count = std::max(0, token_count(request));
  const Usage usage{static_cast<int>(request.prompt.size()), count};
  const auto reason = count < request.max_tokens ? FinishReason::kStop : FinishReason::kLength;
  auto generation = std::make_shared<SyntheticGeneration>(ioc_, active_, std::move(sink),
                                                          arrival + timing_.first_token_delay, timing_.cadence,
                                                          count, usage, reason);
  generation->run();
  return generation;
}

}  // namespace chaosbench::bench::llm
