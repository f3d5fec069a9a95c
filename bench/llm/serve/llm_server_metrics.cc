// The Prometheus text of LlmServerMetrics. See llm_server_metrics.h.
#include "bench/llm/serve/llm_server_metrics.h"

#include <fmt/format.h>

namespace chaosbench::bench::llm {
namespace {

// Model names are ours (validated: no '"', '\\' or newline), so the label needs no escaping.
template <typename T>
void append(std::string& out, const char* name, const char* type, const char* help, const std::string& model,
            T value) {
  out += fmt::format("# HELP {} {}\n# TYPE {} {}\n{}{{model_name=\"{}\"}} {}\n", name, help, name, type, name, model,
                     value);
}

}  // namespace

std::string LlmServerMetrics::prometheus(const std::string& model, const EngineGauges& engine) const {
  std::string out;
  append(out, "vllm:num_requests_running", "gauge", "Requests being generated.", model, engine.running);
  append(out, "vllm:num_requests_waiting", "gauge", "Requests waiting to be generated.", model, engine.waiting);
  append(out, "vllm:kv_cache_usage_perc", "gauge", "KV cache usage (1 means 100 percent).", model,
         engine.kv_cache_usage);
  append(out, "vllm:num_preemptions_total", "counter", "Sequences preempted for want of KV cache blocks.", model,
         engine.preemptions);
  append(out, "vllm:prompt_tokens_total", "counter", "Prompt tokens of accepted requests.", model,
         prompt_tokens_.load());
  append(out, "vllm:generation_tokens_total", "counter", "Tokens generated and sent.", model,
         generation_tokens_.load());
  append(out, "vllm:request_success_total", "counter", "Requests answered in full.", model, successes_.load());
  append(out, "chaosbench:llm_requests_rejected_total", "counter", "Requests refused (429) over the running limit.",
         model, rejected_.load());
  append(out, "chaosbench:llm_requests_cancelled_total", "counter", "Requests whose client left mid-answer.", model,
         cancelled_.load());
  out += ttft_.text("vllm:time_to_first_token_seconds", "Time to first token.", model);
  out += tpot_.text("vllm:time_per_output_token_seconds", "Time per output token after the first.", model);
  return out;
}

}  // namespace chaosbench::bench::llm
