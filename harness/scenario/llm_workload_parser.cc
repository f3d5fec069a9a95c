// workload kind "llm": the built-in OpenAI-compatible server on replica nodes (or outside
// servers named by URL) and the token-level load generator driving them.
// docs/scenario-format.md describes every key; the load block is llm_load_parser.cc.
#include <algorithm>
#include <cmath>
#include <regex>

#include <fmt/format.h>

#include "harness/scenario/scenario_parts.h"

namespace chaosbench::harness {
namespace {

void parse_llm_model(ParseContext& ctx, const json& value, bench::llm::LlmServeSettings::Model& m) {
  ObjectReader r(ctx, value, "workload.model", {"layers", "dim", "heads", "kv_heads", "ffn", "dtype"});
  if (auto v = r.integer("layers", 1, 256)) m.layers = static_cast<int>(*v);
  if (auto v = r.integer("dim", 8, 16384)) m.dim = static_cast<int>(*v);
  if (auto v = r.integer("heads", 1, 256)) m.heads = static_cast<int>(*v);
  if (auto v = r.integer("kv_heads", 1, 256)) m.kv_heads = static_cast<int>(*v);
  if (auto v = r.integer("ffn", 1, 65536)) m.ffn = static_cast<int>(*v);
  if (auto v = r.choice("dtype", {"fp32", "int8"})) m.dtype = *v;
}

void parse_scheduler(ParseContext& ctx, const json& value, bench::llm::LlmServeSettings::Scheduler& q) {
  ObjectReader r(ctx, value, "workload.scheduler",
                 {"max_running", "max_batched_tokens", "kv_blocks", "block_size", "max_waiting"});
  if (auto v = r.integer("max_running", 1, 4096)) q.max_running = static_cast<int>(*v);
  if (auto v = r.integer("max_batched_tokens", 1, 1 << 20)) q.max_batched_tokens = static_cast<int>(*v);
  if (auto v = r.integer("kv_blocks", 1, 1 << 22)) q.kv_blocks = static_cast<int>(*v);
  if (auto v = r.integer("block_size", 1, 1024)) q.block_size = static_cast<int>(*v);
  if (auto v = r.integer("max_waiting", 0, 1 << 20)) q.max_waiting = static_cast<int>(*v);
}

void parse_synthetic(ParseContext& ctx, const json& value, bench::llm::LlmServeSettings::Synthetic& s) {
  ObjectReader r(ctx, value, "workload.synthetic", {"first_token", "cadence", "tokens"});
  // The worker's flags carry whole microseconds.
  auto whole_us = [&](std::string_view key, bool allow_zero) -> std::optional<common::Duration> {
    auto v = r.duration(key, allow_zero);
    if (v && (v->value.count() % 1000 != 0 || (!allow_zero && v->value.count() == 0))) {
      ctx.error(r.path_of(key), allow_zero ? "expected whole microseconds" : "expected whole microseconds, at least 1us");
      return std::nullopt;
    }
    return v;
  };
  if (auto v = whole_us("first_token", true)) s.first_token = *v;
  if (auto v = whole_us("cadence", false)) s.cadence = *v;
  if (auto v = r.integer("tokens", 0, 1 << 20)) s.tokens = static_cast<int>(*v);
}

// "http://HOST:PORT" with an optional trailing slash: the load generator speaks plain
// HTTP/1.1 and adds /v1/... itself.
void parse_endpoints(ParseContext& ctx, const json& value, const std::string& path, std::vector<std::string>& out) {
  static const std::regex kUrl(R"(http://[A-Za-z0-9.\-]+(:[0-9]{1,5})?/?)");
  if (!value.is_array() || value.empty()) {
    ctx.error(path, fmt::format("expected a non-empty array of \"http://HOST:PORT\" URLs, got {}", describe(value)));
    return;
  }
  for (std::size_t i = 0; i < value.size(); ++i) {
    const json& e = value[i];
    if (!e.is_string() || !std::regex_match(e.get_ref<const std::string&>(), kUrl)) {
      ctx.error(join_path(path, i), fmt::format("expected a URL such as \"http://10.0.0.5:8000\", got {}", describe(e)));
      continue;
    }
    std::string url = e.get<std::string>();
    if (url.back() == '/') url.pop_back();
    out.push_back(std::move(url));
  }
}

// The largest length a spec can draw: what must fit in the context.
std::int64_t largest(const bench::llm::LengthSpec& s) {
  using bench::llm::LengthDistribution;
  if (s.kind == LengthDistribution::kFixed) return std::clamp<std::int64_t>(std::llround(s.mean), 1, s.max);
  if (s.kind == LengthDistribution::kUniform) return std::min(s.high, s.max);
  return s.max;  // normal, lognormal: clamped to max
}

// Synthetic prompts on the built-in server: every request must fit its context, or all
// would get 400. (A dataset's lengths are the file's; outside servers have their own.)
void check_context(ParseContext& ctx, ObjectReader& r, const LlmWorkload& w) {
  if (!w.endpoints.empty() || !w.load.dataset.empty() || ctx.failed_under("workload")) return;
  // The chat API wraps the prompt in a template ("user: ...\nassistant: ").
  const std::int64_t slack = w.load.api == bench::llm::OpenAiEndpoint::kChatCompletions ? 32 : 0;
  const std::int64_t need = largest(w.load.input) + largest(w.load.output) + slack;
  if (need > w.context)
    ctx.error(r.path_of("load"),
              fmt::format("prompts of up to {} tokens and answers of up to {} (the largest draws{}) need a context of "
                          "{}, but workload.context is {}: raise it, or lower the lengths (a distribution's \"max\")",
                          largest(w.load.input), largest(w.load.output), slack ? ", plus the chat template" : "", need,
                          w.context));
}

void check_placement(ParseContext& ctx, ObjectReader& r, const ClusterSpec& cluster, LlmWorkload& w) {
  if (ctx.failed_under("cluster")) return;
  const int load_node = w.load.node >= 0 ? w.load.node : cluster.nodes - 1;
  if (!w.endpoints.empty()) {
    if (!w.replicas.empty())
      ctx.error(r.path_of("endpoints"), "give either \"replicas\" (built-in servers) or \"endpoints\" (outside ones), not both");
    return;
  }
  if (cluster.nodes < 2) {
    ctx.error("cluster", "the llm workload needs at least 2 nodes: replicas and a node for the load generator "
                         "(or \"endpoints\" naming outside servers)");
    return;
  }
  if (std::find(w.replicas.begin(), w.replicas.end(), load_node) != w.replicas.end())
    ctx.error(r.path_of("replicas"), fmt::format("node {} runs the load generator; replicas go on other nodes", load_node));
  if (cluster.ranks_per_node != 1)
    ctx.error("cluster.ranks_per_node", "the llm workload runs one process per node: set ranks_per_node to 1");
  // Replicas on one address (local processes) take port, port + 1, ...
  const int replicas = w.replicas.empty() ? cluster.nodes - 1 : static_cast<int>(w.replicas.size());
  if (w.port + replicas - 1 > 65535)
    ctx.error(r.path_of("port"), fmt::format("{} replicas from port {} would go past 65535", replicas, w.port));
}

}  // namespace

LlmWorkload parse_llm(ParseContext& ctx, const json& value, const ClusterSpec& cluster) {
  LlmWorkload w;
  ObjectReader r(ctx, value, "workload",
                 {"kind", "model_name", "engine", "model", "scheduler", "synthetic", "context", "engine_threads",
                  "replicas", "endpoints", "port", "load"});
  if (auto v = r.string("model_name")) {
    if (!valid_name(*v)) ctx.error(r.path_of("model_name"), "expected 1 to 64 of a-z 0-9 . _ -");
    w.model_name = *v;
  }
  if (auto v = r.choice("engine", {"transformer", "synthetic"})) w.engine = *v;
  if (const json* m = r.raw("model")) parse_llm_model(ctx, *m, w.model);
  if (const json* q = r.raw("scheduler")) parse_scheduler(ctx, *q, w.scheduler);
  if (const json* s = r.raw("synthetic")) parse_synthetic(ctx, *s, w.synthetic);
  if (auto v = r.integer("context", 2, 1 << 20)) w.context = static_cast<int>(*v);
  if (auto v = r.integer("engine_threads", 1, 1024)) w.engine_threads = static_cast<int>(*v);
  if (const json* v = r.raw("replicas"))
    if (auto nodes = read_index_list(ctx, *v, r.path_of("replicas"), cluster.nodes, "node")) w.replicas = *nodes;
  if (const json* v = r.raw("endpoints")) parse_endpoints(ctx, *v, r.path_of("endpoints"), w.endpoints);
  if (auto v = r.integer("port", 1024, 65535)) w.port = static_cast<int>(*v);
  if (const json* l = r.raw("load")) parse_llm_load(ctx, *l, cluster, w.load);
  if (!ctx.failed_under("workload"))
    if (auto why = bench::llm::validate(w); !why.empty()) ctx.error("workload", why);
  check_context(ctx, r, w);
  check_placement(ctx, r, cluster, w);
  return w;
}

}  // namespace chaosbench::harness
