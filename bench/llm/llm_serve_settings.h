// The built-in LLM server's settings: what a scenario's `llm` workload sets for its
// replicas, with the one definition of every default. The scenario parser fills it
// (harness/scenario/llm_workload_parser.cc); the launcher encodes it into the
// `chaosbench worker llm-serve` command line and the worker decodes it back. Per-launch
// values (host, seed) and the HTTP layer's own limits are not settings.
#pragma once

#include <chrono>
#include <string>
#include <vector>

#include "bench/common/program_options_fwd.h"
#include "common/values/units.h"

namespace chaosbench::bench::llm {

struct LlmServeSettings {
  // The decoder-only transformer (engine "transformer"): vocabulary is the byte-level
  // tokenizer's, fixed; the rest sizes the seeded weights.
  struct Model {
    int layers = 4;
    int dim = 256;        // hidden size; a multiple of heads
    int heads = 8;        // query heads
    int kv_heads = 2;     // key/value heads (grouped-query attention); divides heads
    int ffn = 768;        // SwiGLU inner width
    std::string dtype = "fp32";  // "fp32" or "int8" (per-channel weights)
    bool operator==(const Model&) const = default;
  };
  // vLLM's scheduler knobs (max_num_seqs, max_num_batched_tokens, num_gpu_blocks,
  // block_size) and the waiting-queue limit past which a request gets 429.
  struct Scheduler {
    int max_running = 32;          // sequences in the running batch
    int max_batched_tokens = 256;  // tokens per iteration (decode + chunked prefill)
    int kv_blocks = 1024;          // the paged KV cache's blocks
    int block_size = 16;           // tokens per block
    int max_waiting = 256;         // queued requests before 429
    bool operator==(const Scheduler&) const = default;
  };
  // Engine "synthetic": fixed first-token delay and cadence, no model (synthetic_engine.h).
  struct Synthetic {
    common::Duration first_token{std::chrono::milliseconds(150)};
    common::Duration cadence{std::chrono::milliseconds(20)};
    int tokens = 64;  // 0: always max_tokens
    bool operator==(const Synthetic&) const = default;
  };

  std::string model_name = "chaosbench-tiny";  // what /v1/models lists and requests name
  std::string engine = "transformer";          // "transformer" or "synthetic"
  Model model;
  Scheduler scheduler;
  Synthetic synthetic;
  int context = 1024;   // prompt + max_tokens must fit (400 context_length_exceeded)
  int engine_threads = 1;  // the transformer's compute threads (GEMMs and attention rows split over them)
  int port = 8000;      // where a replica listens (the launcher offsets it per replica on one address)

  bool operator==(const LlmServeSettings&) const = default;
};

// "" when usable, else what is wrong ("model.dim must be a multiple of model.heads").
std::string validate(const LlmServeSettings& s);

// The settings as `chaosbench worker llm-serve` flags ("--model", NAME, "--engine", ...).
std::vector<std::string> encode_llm_serve_settings(const LlmServeSettings& s);
void add_llm_serve_settings_flags(boost::program_options::options_description& options);
// Throws std::invalid_argument naming the flag, or with validate()'s text.
LlmServeSettings read_llm_serve_settings(const boost::program_options::variables_map& vm);
LlmServeSettings decode_llm_serve_settings(const std::vector<std::string>& flags);

}  // namespace chaosbench::bench::llm
