#include "bench/llm/llm_serve_settings.h"

#include <stdexcept>

#include <fmt/format.h>

#include <boost/program_options/options_description.hpp>
#include <boost/program_options/variables_map.hpp>

#include "bench/common/flag_values.h"

namespace chaosbench::bench::llm {

namespace po = boost::program_options;

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

std::vector<std::string> encode_llm_serve_settings(const LlmServeSettings& s) {
  const auto& m = s.model;
  const auto& q = s.scheduler;
  return {"--model", s.model_name,
          "--engine", s.engine,
          "--layers", std::to_string(m.layers),
          "--dim", std::to_string(m.dim),
          "--heads", std::to_string(m.heads),
          "--kv-heads", std::to_string(m.kv_heads),
          "--ffn", std::to_string(m.ffn),
          "--dtype", m.dtype,
          "--max-running", std::to_string(q.max_running),
          "--max-batched-tokens", std::to_string(q.max_batched_tokens),
          "--kv-blocks", std::to_string(q.kv_blocks),
          "--block-size", std::to_string(q.block_size),
          "--max-waiting", std::to_string(q.max_waiting),
          "--synthetic-first-token-us", std::to_string(s.synthetic.first_token.value.count() / 1000),
          "--synthetic-cadence-us", std::to_string(s.synthetic.cadence.value.count() / 1000),
          "--synthetic-tokens", std::to_string(s.synthetic.tokens),
          "--context", std::to_string(s.context),
          "--engine-threads", std::to_string(s.engine_threads),
          "--port", std::to_string(s.port)};
}

void add_llm_serve_settings_flags(po::options_description& options) {
  const LlmServeSettings d;
  const auto& m = d.model;
  const auto& q = d.scheduler;
  options.add_options()
      ("model", po::value<std::string>()->default_value(d.model_name), "the served model's name")
      ("engine", po::value<std::string>()->default_value(d.engine), "transformer or synthetic")
      ("layers", po::value<int>()->default_value(m.layers), "transformer blocks")
      ("dim", po::value<int>()->default_value(m.dim), "hidden size")
      ("heads", po::value<int>()->default_value(m.heads), "query heads")
      ("kv-heads", po::value<int>()->default_value(m.kv_heads), "key/value heads (grouped-query attention)")
      ("ffn", po::value<int>()->default_value(m.ffn), "SwiGLU inner width")
      ("dtype", po::value<std::string>()->default_value(m.dtype), "fp32 or int8 weights")
      ("max-running", po::value<int>()->default_value(q.max_running), "sequences in the running batch")
      ("max-batched-tokens", po::value<int>()->default_value(q.max_batched_tokens), "tokens per iteration")
      ("kv-blocks", po::value<int>()->default_value(q.kv_blocks), "KV cache blocks")
      ("block-size", po::value<int>()->default_value(q.block_size), "tokens per KV block")
      ("max-waiting", po::value<int>()->default_value(q.max_waiting), "queued requests before 429")
      ("synthetic-first-token-us", po::value<long>()->default_value(d.synthetic.first_token.value.count() / 1000),
       "synthetic: delay to the first token")
      ("synthetic-cadence-us", po::value<long>()->default_value(d.synthetic.cadence.value.count() / 1000),
       "synthetic: then one token per this")
      ("synthetic-tokens", po::value<int>()->default_value(d.synthetic.tokens),
       "synthetic: tokens per answer (0: max_tokens)")
      ("context", po::value<int>()->default_value(d.context), "context length in tokens")
      ("engine-threads", po::value<int>()->default_value(d.engine_threads),
       "transformer: compute threads (GEMMs, attention)")
      ("port", po::value<int>()->default_value(d.port), "port to bind (0: any free one)");
}

LlmServeSettings read_llm_serve_settings(const po::variables_map& vm) {
  LlmServeSettings s;
  s.model_name = vm["model"].as<std::string>();
  s.engine = vm["engine"].as<std::string>();
  s.model.layers = vm["layers"].as<int>();
  s.model.dim = vm["dim"].as<int>();
  s.model.heads = vm["heads"].as<int>();
  s.model.kv_heads = vm["kv-heads"].as<int>();
  s.model.ffn = vm["ffn"].as<int>();
  s.model.dtype = vm["dtype"].as<std::string>();
  s.scheduler.max_running = vm["max-running"].as<int>();
  s.scheduler.max_batched_tokens = vm["max-batched-tokens"].as<int>();
  s.scheduler.kv_blocks = vm["kv-blocks"].as<int>();
  s.scheduler.block_size = vm["block-size"].as<int>();
  s.scheduler.max_waiting = vm["max-waiting"].as<int>();
  const long first = vm["synthetic-first-token-us"].as<long>(), cadence = vm["synthetic-cadence-us"].as<long>();
  if (first < 0) throw std::invalid_argument("--synthetic-first-token-us: expected 0 or more");
  if (cadence <= 0) throw std::invalid_argument("--synthetic-cadence-us: expected a positive number");
  s.synthetic.first_token = common::Duration{std::chrono::microseconds(first)};
  s.synthetic.cadence = common::Duration{std::chrono::microseconds(cadence)};
  s.synthetic.tokens = vm["synthetic-tokens"].as<int>();
  s.context = vm["context"].as<int>();
  s.engine_threads = vm["engine-threads"].as<int>();
  s.port = vm["port"].as<int>();
  if (auto why = validate(s); !why.empty()) throw std::invalid_argument(why);
  return s;
}

LlmServeSettings decode_llm_serve_settings(const std::vector<std::string>& flags) {
  return decode_flags(flags, add_llm_serve_settings_flags, read_llm_serve_settings);
}

}  // namespace chaosbench::bench::llm
