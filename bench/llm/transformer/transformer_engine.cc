// The transformer engine's thread and its generations. See transformer_engine.h.
#include "bench/llm/transformer/transformer_engine.h"

#include <fmt/format.h>

#include <chrono>
#include <cstdio>
#include <exception>

#include "bench/llm/transformer/byte_tokenizer.h"
#include "bench/compute/counter_rng.h"

namespace chaosbench::bench::llm {
namespace {

// One request's handle: its sink, and the flag the engine thread sweeps. The mutex orders
// a sink call against cancel(), so no token is delivered once cancel() has returned.
class TransformerGeneration : public Generation {
 public:
  TransformerGeneration(TransformerEngine& engine, std::atomic<std::size_t>& active, TokenSink sink, int prompt_bytes)
      : engine_(engine), active_(active), sink_(std::move(sink)), prompt_bytes_(prompt_bytes) {
    active_.fetch_add(1);
  }
  ~TransformerGeneration() override { release(); }

  void cancel() override {
    {
      std::lock_guard lock(mu_);
      if (done_) return;
      cancelled_.store(true);
      release_locked();
    }
    engine_.wake();
  }
  bool cancelled() const { return cancelled_.load(); }

  void token(std::string_view text) {
    std::lock_guard lock(mu_);
    if (!done_ && !text.empty()) sink_.on_token(text);
  }
  void finish(FinishReason reason, int generated) {
    std::lock_guard lock(mu_);
    if (done_) return;
    auto sink = std::move(sink_);
    release_locked();
    sink.on_finish(reason, Usage{prompt_bytes_, generated});
  }

 private:
  void release() {
    std::lock_guard lock(mu_);
    release_locked();
  }
  void release_locked() {
    if (done_) return;
    done_ = true;
    sink_ = {};
    active_.fetch_sub(1);
  }

  TransformerEngine& engine_;
  std::atomic<std::size_t>& active_;
  std::mutex mu_;
  TokenSink sink_;
  int prompt_bytes_;
  bool done_ = false;
  std::atomic<bool> cancelled_{false};
};

TransformerGeneration& generation_of(const Sequence& s) { return *static_cast<TransformerGeneration*>(s.owner.get()); }

}  // namespace

TransformerEngine::TransformerEngine(const TransformerEngineConfig& cfg)
    : cfg_(cfg), model_(cfg.model, cfg.seed, cfg.context + 1, cfg.int8_path, cfg.threads),
      cache_(model_.make_cache(cfg.scheduler.kv_blocks, cfg.scheduler.block_size)), scheduler_(cfg.scheduler, cache_),
      thread_([this] { run(); }) {}

TransformerEngine::~TransformerEngine() { shutdown(); }

void TransformerEngine::shutdown() {
  {
    std::lock_guard lock(mu_);
    stop_ = true;
  }
  cv_.notify_all();
  {
    // A step held by gpu.hang returns (with its requests failed) so the thread can end.
    const DeviceFaults::Release release(cfg_.faults.get());
    if (thread_.joinable()) thread_.join();
  }
  std::vector<std::shared_ptr<Sequence>> dropped;
  {
    std::lock_guard lock(mu_);
    dropped.swap(inbox_);
    inbox_size_.store(0);
  }
  for (const auto& s : scheduler_.all()) scheduler_.remove(s.get());
}

std::string TransformerEngine::describe() const {
  const auto& q = cfg_.scheduler;
  return fmt::format("{}; max {} running, {} tokens a step, {} KV blocks of {}", model_.describe(), q.max_running,
                     q.max_batched_tokens, q.kv_blocks, q.block_size);
}

std::size_t TransformerEngine::waiting() const { return inbox_size_.load() + scheduler_.waiting(); }

void TransformerEngine::wake() {
  {
    std::lock_guard lock(mu_);
    swept_ = false;
  }
  cv_.notify_all();
}

std::shared_ptr<Generation> TransformerEngine::start(const CompletionRequest& request, Clock::time_point,
                                                     TokenSink sink) {
  const auto limit = static_cast<std::size_t>(cfg_.scheduler.max_running) + cfg_.scheduler.max_waiting;
  auto seq = std::make_shared<Sequence>();
  seq->id = next_id_.fetch_add(1);
  seq->tokens = ByteTokenizer::encode(request.prompt);
  seq->prompt_tokens = static_cast<int>(seq->tokens.size());
  seq->max_tokens = request.max_tokens;
  seq->sampling = {request.temperature, request.top_p,
                   request.seed ? *request.seed : train::stream_key(cfg_.seed, seq->id), request.ignore_eos};
  if (seq->prompt_tokens - 1 + seq->max_tokens > cfg_.context) return nullptr;  // the server checked already
  std::shared_ptr<TransformerGeneration> generation;
  {
    std::lock_guard lock(mu_);
    if (stop_ || active_.load() >= limit) return nullptr;
    generation = std::make_shared<TransformerGeneration>(*this, active_, std::move(sink),
                                                         static_cast<int>(request.prompt.size()));
    seq->owner = generation;
    inbox_.push_back(std::move(seq));
    inbox_size_.store(inbox_.size());
  }
  cv_.notify_all();
  return generation;
}

void TransformerEngine::run() {
  for (;;) {
    std::vector<std::shared_ptr<Sequence>> arrived;
    {
      std::unique_lock lock(mu_);
      cv_.wait(lock, [&] {
        return stop_ || !inbox_.empty() || !swept_ || scheduler_.running() + scheduler_.waiting() > 0;
      });
      if (stop_) return;
      arrived.swap(inbox_);
      inbox_size_.store(0);
      swept_ = true;
    }
    for (auto& s : arrived) scheduler_.add(std::move(s));
    sweep_cancelled();
    if (scheduler_.running() + scheduler_.waiting() > 0) step();
  }
}

// Cancelled generations leave the batch here, freeing their blocks, between steps.
void TransformerEngine::sweep_cancelled() {
  for (const auto& s : scheduler_.all())
    if (generation_of(*s).cancelled()) scheduler_.remove(s.get());
}

void TransformerEngine::step() {
  const auto plan = scheduler_.schedule();
  if (plan.items.empty()) return;
  segments_.clear();
  for (const auto& item : plan.items)
    segments_.push_back({item.seq->tokens.data() + item.start, item.start, item.count, item.seq->blocks.data(),
                         item.sample});
  try {
    const auto& faults = cfg_.faults;
    if (faults) faults->allocation();  // the step's activations: where gpu.oom and gpu.xid surface
    const auto t0 = std::chrono::steady_clock::now();
    model_.forward(segments_, cache_, logits_);
    if (faults && faults->slowed()) faults->device_work(std::chrono::steady_clock::now() - t0);
  } catch (const std::exception& e) {
    return fail_all(e.what());
  }
  deliver(plan);
}

// Samples each sequence whose chunk reached its end; sends the text; finishes.
void TransformerEngine::deliver(const BatchScheduler::Plan& plan) {
  std::size_t row = 0;
  for (const auto& item : plan.items) {
    Sequence& s = *item.seq;
    s.computed = item.start + item.count;
    if (!item.sample) continue;
    const float* logits = logits_.data() + row++ * static_cast<std::size_t>(model_.vocab());
    const int token = sample_token(logits, model_.vocab(), s.sampling, static_cast<std::uint64_t>(s.generated()));
    s.tokens.push_back(token);
    auto& generation = generation_of(s);
    const bool eos = token == ByteTokenizer::kEos && !s.sampling.ignore_eos;
    if (!eos) generation.token(ByteTokenizer::text(token));
    if (eos || s.generated() >= s.max_tokens) {
      const auto owner = s.owner;  // keeps the generation alive past remove()
      const int generated = s.generated();
      scheduler_.remove(&s);
      generation.finish(eos ? FinishReason::kStop : FinishReason::kLength, generated);
    }
  }
}

std::optional<std::string> TransformerEngine::device_lost() const {
  return cfg_.faults ? cfg_.faults->sticky_error() : std::nullopt;
}

// A failed step (an injected device fault): every request ends now with an error, as a
// GPU server whose device failed does; new ones fail at their first step while it lasts.
void TransformerEngine::fail_all(const char* why) {
  std::fprintf(stderr, "llm-serve: engine step failed: %s\n", why);
  for (const auto& s : scheduler_.all()) {
    const int generated = s->generated();
    scheduler_.remove(s.get());
    generation_of(*s).finish(FinishReason::kError, generated);
  }
}

}  // namespace chaosbench::bench::llm
