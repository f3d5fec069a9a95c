// The LLM load generator's settings: what a scenario's `llm` workload sets in its "load"
// block, with the one definition of every default. The scenario parser fills it
// (harness/scenario/llm_workload_parser.cc); the launcher encodes it into the
// `chaosbench worker llm-load` command line and the worker decodes it back. Per-launch
// values are not settings: the launcher adds --endpoints, --model and --seed beside them.
#pragma once

#include <chrono>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "bench/common/program_options_fwd.h"
#include "bench/llm/load/length_sampler.h"
#include "bench/llm/openai_endpoint.h"
#include "bench/llm/load/slo.h"
#include "common/values/units.h"

namespace chaosbench::bench::llm {

// How requests are issued. Poisson and constant are open-loop: request i is due at its
// scheduled time whatever happened to the earlier ones, and every latency counts from it.
// Concurrency is closed-loop: `concurrency` streams are kept in flight, each sending its
// next request when the last one ends (due at that moment).
enum class Arrival { kPoisson, kConstant, kConcurrency };
std::string_view to_string(Arrival a);
std::optional<Arrival> parse_arrival(std::string_view s);

// find_peak (find_peak.h): trials of `trial` each at a rising rate until the highest rate
// whose SLO attainment reaches `target_attainment` is bracketed within `precision`.
struct PeakSearchSettings {
  double start_rate = 1;            // requests per second
  double target_attainment = 99;    // %
  double precision = 0.1;           // relative width of the final bracket
  common::Duration trial{std::chrono::seconds(5)};
  int max_trials = 12;

  bool operator==(const PeakSearchSettings&) const = default;
};

struct LlmLoadSettings {
  OpenAiEndpoint api = OpenAiEndpoint::kCompletions;  // /v1/completions or /v1/chat/completions
  bool stream = true;                                  // SSE; false: one JSON body
  Arrival arrival = Arrival::kPoisson;
  double rate = 4;        // poisson/constant: requests per second
  int concurrency = 8;    // concurrency: streams in flight
  common::Duration duration{std::chrono::seconds(10)};  // how long requests are issued
  LengthSpec input{LengthDistribution::kFixed, 128, 0, 1, 1, 4096};  // prompt tokens
  LengthSpec output{LengthDistribution::kFixed, 64, 0, 1, 1, 4096};  // max_tokens
  bool ignore_eos = true;  // ask the server for exactly max_tokens (vLLM's extension)
  std::string dataset;     // a JSONL prompt file (prompt_file.h); empty: synthetic prompts
  Slo slo;                 // goodput's bounds; none: every completed request attains it
  common::Duration timeout{std::chrono::seconds(60)};  // per request, from its scheduled time
  common::Duration window{std::chrono::seconds(1)};    // metrics every this long
  int max_in_flight = 1024;  // open-loop: requests in flight at most; a due request past it fails
  std::optional<PeakSearchSettings> find_peak;  // set: search the peak instead of one run

  bool operator==(const LlmLoadSettings&) const;
};

// The settings as `chaosbench worker llm-load` flags ("--api", "completions", ...);
// durations in whole milliseconds; lengths as "fixed:128", "uniform:16:256",
// "normal:128:32", "lognormal:128:64", each with ",max=N" when not 4096; the SLO bounds
// and the find_peak flags only when set.
std::vector<std::string> encode_llm_load_settings(const LlmLoadSettings& s);

// "fixed:128" and friends (above) <-> LengthSpec; parse throws std::invalid_argument
// naming `flag` with what was expected, and also for a spec that does not validate.
std::string length_flag(const LengthSpec& spec);
LengthSpec parse_length_flag(const std::string& text, const char* flag);

void add_llm_load_settings_flags(boost::program_options::options_description& options);
// Throws std::invalid_argument naming the flag.
LlmLoadSettings read_llm_load_settings(const boost::program_options::variables_map& vm);
LlmLoadSettings decode_llm_load_settings(const std::vector<std::string>& flags);

}  // namespace chaosbench::bench::llm
