#include "bench/llm/llm_serve_settings.h"

#include <stdexcept>

#include <fmt/format.h>

#include <boost/program_options/options_description.hpp>
#include <boost/program_options/variables_map.hpp>

#include "bench/common/settings_table.h"

namespace chaosbench::bench::llm {

namespace {

constexpr int kMaxGiB = 32;  // what one replica may take of a host's memory

// fp32 bytes (int8 weights are smaller, the cache is not): the weights of every layer
// (q and o: dim x dim, k and v: dim x kv_dim, SwiGLU: 3 x dim x ffn), the byte-level
// embedding and head, and the KV cache (2 x kv_dim per token per layer).
double memory_bytes(const LlmServeSettings& s) {
  const double dim = s.model.dim, kv_dim = dim / s.model.heads * s.model.kv_heads, layers = s.model.layers;
  const double weights = layers * (2 * dim * dim + 2 * dim * kv_dim + 3 * dim * s.model.ffn) + 2 * 258 * dim;
  const double cache = double(s.scheduler.kv_blocks) * s.scheduler.block_size * layers * 2 * kv_dim;
  return 4 * (weights + cache);
}

std::string range_error(const char* name, long v, long lo, long hi) {
  if (v < lo || v > hi) return fmt::format("{} must be from {} to {}, got {}", name, lo, hi, v);
  return "";
}

}  // namespace

std::string validate(const LlmServeSettings& s) {
  const auto& m = s.model;
  const auto& q = s.scheduler;
  for (const auto& why : {range_error("model.layers", m.layers, 1, 256), range_error("model.dim", m.dim, 8, 16384),
                          range_error("model.heads", m.heads, 1, 256), range_error("model.kv_heads", m.kv_heads, 1, 256),
                          range_error("model.ffn", m.ffn, 1, 65536),
                          range_error("scheduler.max_running", q.max_running, 1, 4096),
                          range_error("scheduler.max_batched_tokens", q.max_batched_tokens, 1, 1 << 20),
                          range_error("scheduler.kv_blocks", q.kv_blocks, 1, 1 << 22),
                          range_error("scheduler.block_size", q.block_size, 1, 1024),
                          range_error("scheduler.max_waiting", q.max_waiting, 0, 1 << 20),
                          range_error("synthetic.tokens", s.synthetic.tokens, 0, 1 << 20),
                          range_error("context", s.context, 2, 1 << 20), range_error("port", s.port, 0, 65535),
                          range_error("engine_threads", s.engine_threads, 1, 1024)})
    if (!why.empty()) return why;
  if (m.dim % m.heads != 0) return fmt::format("model.dim ({}) must be a multiple of model.heads ({})", m.dim, m.heads);
  if ((m.dim / m.heads) % 2 != 0) return "model.dim / model.heads (the head size) must be even for rotary positions";
  if (m.heads % m.kv_heads != 0)
    return fmt::format("model.kv_heads ({}) must divide model.heads ({})", m.kv_heads, m.heads);
  if (m.dtype != "fp32" && m.dtype != "int8") return "model.dtype must be fp32 or int8";
  if (s.engine != "transformer" && s.engine != "synthetic") return "engine must be transformer or synthetic";
  if (s.engine == "transformer" && static_cast<long>(q.kv_blocks) * q.block_size < s.context)
    return fmt::format("the KV cache (scheduler.kv_blocks × block_size = {} tokens) must hold one whole context ({})",
                       static_cast<long>(q.kv_blocks) * q.block_size, s.context);
  // vLLM's rule: every running sequence must fit its decode token in one iteration, else
  // the later ones never get a step while holding their KV blocks.
  if (s.engine == "transformer" && q.max_batched_tokens < q.max_running)
    return fmt::format("scheduler.max_batched_tokens ({}) must be at least scheduler.max_running ({})",
                       q.max_batched_tokens, q.max_running);
  if (s.engine == "transformer") {
    const double gib = memory_bytes(s) / double(1ull << 30);
    if (gib > kMaxGiB)
      return fmt::format("the model's weights and KV cache would take {:.1f} GiB, more than the {} GiB the CPU engine "
                         "allows: make model or scheduler.kv_blocks smaller",
                         gib, kMaxGiB);
  }
  if (s.model_name.empty() || s.model_name.size() > 64) return "model_name must be 1 to 64 characters";
  if (s.synthetic.cadence.value.count() <= 0) return "synthetic.cadence must be positive";
  return "";
}

namespace {

using LSS = LlmServeSettings;

// In the order the launcher has always written them.
void add_llm_serve_rows(SettingsTable<LSS>& t) {
  t.add("model", &LSS::model_name, "the served model's name")
      .add("engine", &LSS::engine, "transformer or synthetic")
      .add("layers", [](LSS& s) -> int& { return s.model.layers; }, "transformer blocks")
      .add("dim", [](LSS& s) -> int& { return s.model.dim; }, "hidden size")
      .add("heads", [](LSS& s) -> int& { return s.model.heads; }, "query heads")
      .add("kv-heads", [](LSS& s) -> int& { return s.model.kv_heads; }, "key/value heads (grouped-query attention)")
      .add("ffn", [](LSS& s) -> int& { return s.model.ffn; }, "SwiGLU inner width")
      .add("dtype", [](LSS& s) -> std::string& { return s.model.dtype; }, "fp32 or int8 weights")
      .add("max-running", [](LSS& s) -> int& { return s.scheduler.max_running; }, "sequences in the running batch")
      .add("max-batched-tokens", [](LSS& s) -> int& { return s.scheduler.max_batched_tokens; }, "tokens per iteration")
      .add("kv-blocks", [](LSS& s) -> int& { return s.scheduler.kv_blocks; }, "KV cache blocks")
      .add("block-size", [](LSS& s) -> int& { return s.scheduler.block_size; }, "tokens per KV block")
      .add("max-waiting", [](LSS& s) -> int& { return s.scheduler.max_waiting; }, "queued requests before 429")
      .add("synthetic-first-token-us", [](LSS& s) -> common::Duration& { return s.synthetic.first_token; },
           "synthetic: delay to the first token", MicrosCodec{0})
      .add("synthetic-cadence-us", [](LSS& s) -> common::Duration& { return s.synthetic.cadence; },
           "synthetic: then one token per this", MicrosCodec{1})
      .add("synthetic-tokens", [](LSS& s) -> int& { return s.synthetic.tokens; },
           "synthetic: tokens per answer (0: max_tokens)")
      .add("context", &LSS::context, "context length in tokens")
      .add("engine-threads", &LSS::engine_threads, "transformer: compute threads (GEMMs, attention)")
      .add("port", &LSS::port, "port to bind (0: any free one)")
      .check([](const LSS& s) { return validate(s); });
}

const SettingsTable<LSS>& llm_serve_settings_table() {
  static const SettingsTable<LSS> table = [] {
    SettingsTable<LSS> t;
    add_llm_serve_rows(t);
    return t;
  }();
  return table;
}

}  // namespace

std::vector<std::string> encode_llm_serve_settings(const LlmServeSettings& s) {
  return llm_serve_settings_table().encode(s);
}

void add_llm_serve_settings_flags(boost::program_options::options_description& options) {
  llm_serve_settings_table().declare(options);
}

LlmServeSettings read_llm_serve_settings(const boost::program_options::variables_map& vm) {
  return llm_serve_settings_table().read(vm);
}

LlmServeSettings decode_llm_serve_settings(const std::vector<std::string>& flags) {
  return decode_flags(flags, add_llm_serve_settings_flags, read_llm_serve_settings);
}

}  // namespace chaosbench::bench::llm
