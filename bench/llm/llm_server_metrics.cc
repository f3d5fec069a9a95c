// The Prometheus text of LlmServerMetrics. See llm_server_metrics.h.
#include "bench/llm/llm_server_metrics.h"

#include <fmt/format.h>

namespace chaosbench::bench::llm {
namespace {

// Model names are ours (validated: no '"', '\\' or newline), so the label needs no escaping.
void append(std::string& out, const char* name, const char* type, const char* help, const std::string& model,
            std::uint64_t value) {
  out += fmt::format("# HELP {} {}\n# TYPE {} {}\n{}{{model_name=\"{}\"}} {}\n", name, help, name, type, name, model,
                     value);
}

}  // namespace

std::string LlmServerMetrics::prometheus(const std::string& model, std::size_t running, std::size_t waiting) const {
  std::string out;
  append(out, "vllm:num_requests_running", "gauge", "Requests being generated.", model, running);
  append(out, "vllm:num_requests_waiting", "gauge", "Requests waiting to be generated.", model, waiting);
  append(out, "vllm:prompt_tokens_total", "counter", "Prompt tokens of accepted requests.", model,
         prompt_tokens_.load());
  append(out, "vllm:generation_tokens_total", "counter", "Tokens generated and sent.", model,
         generation_tokens_.load());
  append(out, "vllm:request_success_total", "counter", "Requests answered in full.", model, successes_.load());
  append(out, "chaosbench:llm_requests_rejected_total", "counter", "Requests refused (429) over the running limit.",
         model, rejected_.load());
  append(out, "chaosbench:llm_requests_cancelled_total", "counter", "Requests whose client left mid-answer.", model,
         cancelled_.load());
  return out;
}

}  // namespace chaosbench::bench::llm
