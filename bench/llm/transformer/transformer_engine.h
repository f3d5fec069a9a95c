// The TokenEngine of the built-in LLM server that runs a real model: the transformer
// (transformer_model.h) on ONE engine thread that loops over scheduler iterations
// (batch_scheduler.h): sweep cancelled requests (their KV blocks freed), schedule, run one
// forward pass for every scheduled token, sample, hand each sampled token's text to its
// sink, finish what hit EOS or max_tokens. Prefill is chunked; decode is batched (one GEMM
// per weight matrix per step); the paged KV cache preempts by recomputation.
// start() refuses (returns nullptr, the server answers 429) once max_running +
// max_waiting requests are active: a full batch and a full queue.
// Usage counts the prompt's bytes and the generated tokens (an EOS included, as vLLM);
// EOS ends an answer with "stop" and has no text; max_tokens ends it with "length".
// GPU faults (bench/common/device_faults.h) act on each step as on a device call: an
// armed gpu.oom or gpu.xid fails the step's sequences (finished "stop" early), gpu.hang
// blocks the step, gpu.slowdown stretches it.
// Threads: start(), cancel() and the gauges are safe from any thread; they lock a mutex
// only for a queue push. Sinks are called on the engine thread under their generation's
// lock, so a sink must not block (the server's posts to its strand). shutdown() (and the
// destructor) stops and joins the engine thread; unfinished generations get no finish.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "bench/common/device_faults.h"
#include "bench/llm/llm_serve_settings.h"
#include "bench/llm/token_engine.h"
#include "bench/llm/transformer/batch_scheduler.h"
#include "bench/llm/transformer/transformer_model.h"

namespace chaosbench::bench::llm {

struct TransformerEngineConfig {
  LlmServeSettings::Model model;
  LlmServeSettings::Scheduler scheduler;
  int context = 1024;  // positions a sequence may reach (prompt + max_tokens)
  std::uint64_t seed = 1;  // the weights'; and a request's sampling seed when it gives none
  serve::Int8Path int8_path = serve::Int8Path::kAuto;
  int threads = 1;  // the model's compute threads (GEMM channel ranges, attention rows)
  std::shared_ptr<DeviceFaults> faults;  // null: none
};

class TransformerEngine : public TokenEngine {
 public:
  explicit TransformerEngine(const TransformerEngineConfig& cfg);
  ~TransformerEngine() override;
  TransformerEngine(const TransformerEngine&) = delete;
  TransformerEngine& operator=(const TransformerEngine&) = delete;

  std::shared_ptr<Generation> start(const CompletionRequest& request, Clock::time_point arrival,
                                    TokenSink sink) override;
  std::size_t active() const override { return active_.load(); }
  std::size_t waiting() const override;
  std::size_t running() const override { return scheduler_.running(); }
  double kv_cache_usage() const override { return cache_.allocator().usage(); }
  std::uint64_t preemptions() const override { return scheduler_.preemptions(); }
  // Joins the engine thread and drops every request (no finish). Idempotent; not
  // concurrent with start().
  void shutdown() override;
  std::optional<std::string> device_lost() const override;

  const TransformerModel& model() const { return model_; }
  std::string describe() const;

  // Called by a cancelled generation: the engine thread sweeps at its next iteration.
  void wake();

 private:
  void run();
  void step();
  void deliver(const BatchScheduler::Plan& plan);
  void sweep_cancelled();
  void fail_all(const char* why);

  TransformerEngineConfig cfg_;
  // Before the sequences (in inbox_ and scheduler_): their generations release into it.
  std::atomic<std::size_t> active_{0};
  TransformerModel model_;
  PagedKvCache cache_;
  BatchScheduler scheduler_;
  std::vector<float> logits_;
  std::vector<ForwardSegment> segments_;

  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::vector<std::shared_ptr<Sequence>> inbox_;  // started, not yet in the scheduler
  std::atomic<std::size_t> inbox_size_{0};
  bool stop_ = false;
  bool swept_ = true;  // no cancel since the last sweep
  std::atomic<std::uint64_t> next_id_{1};
  std::thread thread_;
};

}  // namespace chaosbench::bench::llm
