// The llm workload's "load" block: arrivals, prompt and output lengths (or a JSONL
// dataset), the SLO and find_peak. docs/scenario-format.md describes every key.
#include <fmt/format.h>

#include "harness/scenario/scenario_parts.h"

namespace chaosbench::harness {
namespace {

using bench::llm::LengthDistribution;
using bench::llm::LengthSpec;

// A length: a plain integer (fixed) or {distribution, mean, stddev, low, high, max}.
void parse_length(ParseContext& ctx, const json& value, const std::string& path, LengthSpec& spec) {
  if (value.is_number_integer()) {
    if (auto v = read_integer(ctx, value, path, 1, 1 << 20)) {
      spec = LengthSpec{};
      spec.mean = static_cast<double>(*v);
      spec.max = std::max<std::int64_t>(spec.max, *v);
    }
    return;
  }
  ObjectReader r(ctx, value, path, {"distribution", "mean", "stddev", "low", "high", "max"});
  if (!r.ok()) return;
  LengthSpec s;
  if (auto v = r.choice("distribution", {"fixed", "uniform", "normal", "lognormal"}))
    s.kind = *v == "fixed" ? LengthDistribution::kFixed
             : *v == "uniform" ? LengthDistribution::kUniform
             : *v == "normal"  ? LengthDistribution::kNormal
                               : LengthDistribution::kLognormal;
  if (auto v = r.number("mean")) s.mean = *v;
  if (auto v = r.number("stddev")) s.stddev = *v;
  if (auto v = r.integer("low", 1, 1 << 20)) s.low = *v;
  if (auto v = r.integer("high", 1, 1 << 20)) s.high = *v;
  if (auto v = r.integer("max", 1, 1 << 20)) s.max = *v;
  if (ctx.failed_under(path)) return;
  if (auto why = bench::llm::validate(s); !why.empty()) ctx.error(path, why);
  else spec = s;
}

// A duration of at least `least`, in whole units of `unit` (the worker's flags carry whole
// milliseconds, or whole microseconds for tpot: "1.5ms" would silently become 1 ms), or
// nullopt with the error reported.
std::optional<common::Duration> duration_of_at_least(ObjectReader& r, std::string_view key, std::chrono::nanoseconds least,
                                                     std::string_view least_text,
                                                     std::chrono::nanoseconds unit = std::chrono::milliseconds(1)) {
  auto v = r.duration(key, /*allow_zero=*/false);
  if (v && v->value < least) {
    r.ctx().error(r.path_of(key), fmt::format("expected a duration of at least {}", least_text));
    return std::nullopt;
  }
  if (v && v->value.count() % unit.count() != 0) {
    r.ctx().error(r.path_of(key), unit == std::chrono::milliseconds(1)
                                      ? "expected whole milliseconds (\"1.5s\" or \"1500ms\"; not \"1.5ms\")"
                                      : "expected whole microseconds (\"1.5ms\" or \"1500us\"; not \"1.5us\")");
    return std::nullopt;
  }
  return v;
}

void parse_slo(ParseContext& ctx, const json& value, bench::llm::Slo& slo) {
  ObjectReader r(ctx, value, "workload.load.slo", {"ttft", "tpot", "e2e"});
  slo.ttft = duration_of_at_least(r, "ttft", std::chrono::milliseconds(1), "1ms");
  slo.tpot = duration_of_at_least(r, "tpot", std::chrono::microseconds(1), "1us", std::chrono::microseconds(1));
  slo.e2e = duration_of_at_least(r, "e2e", std::chrono::milliseconds(1), "1ms");
}

void parse_find_peak(ParseContext& ctx, const json& value, bench::llm::PeakSearchSettings& p) {
  ObjectReader r(ctx, value, "workload.load.find_peak",
                 {"start_rate", "target_attainment", "precision", "trial", "max_trials"});
  if (auto v = r.number("start_rate")) {
    if (!(*v > 0 && *v <= 1e6)) ctx.error(r.path_of("start_rate"), "expected a rate in (0, 1e6]");
    else p.start_rate = *v;
  }
  if (auto v = r.number("target_attainment")) {
    if (!(*v > 0 && *v <= 100)) ctx.error(r.path_of("target_attainment"), "expected a percentage in (0, 100]");
    else p.target_attainment = *v;
  }
  if (auto v = r.number("precision")) {
    if (!(*v > 0 && *v < 1)) ctx.error(r.path_of("precision"), "expected a fraction in (0, 1)");
    else p.precision = *v;
  }
  if (auto v = duration_of_at_least(r, "trial", std::chrono::milliseconds(100), "100ms")) p.trial = *v;
  if (auto v = r.integer("max_trials", 2, 100)) p.max_trials = static_cast<int>(*v);
}

void parse_llm_arrivals(ObjectReader& r, ParseContext& ctx, LlmLoadSpec& l) {
  if (auto v = r.choice("arrival", {"poisson", "constant", "concurrency"}))
    l.arrival = bench::llm::parse_arrival(*v).value_or(bench::llm::Arrival::kPoisson);
  if (auto v = r.number("rate")) {
    if (!(*v > 0 && *v <= 1e6)) ctx.error(r.path_of("rate"), fmt::format("expected a rate in (0, 1e6], got {}", *v));
    else l.rate = *v;
  }
  if (auto v = r.integer("concurrency", 1, 100000)) l.concurrency = static_cast<int>(*v);
  if (auto v = r.integer("max_in_flight", 1, 100000)) l.max_in_flight = static_cast<int>(*v);
}

}  // namespace

void parse_llm_load(ParseContext& ctx, const json& value, const ClusterSpec& cluster, LlmLoadSpec& l) {
  ObjectReader r(ctx, value, "workload.load",
                 {"node", "api", "stream", "arrival", "rate", "concurrency", "duration", "input", "output",
                  "ignore_eos", "dataset", "slo", "timeout", "window", "max_in_flight", "find_peak"});
  if (auto v = r.integer("node", 0, std::max(0, cluster.nodes - 1))) l.node = static_cast<int>(*v);
  if (auto v = r.choice("api", {"completions", "chat"}))
    l.api = *v == "chat" ? bench::llm::OpenAiEndpoint::kChatCompletions : bench::llm::OpenAiEndpoint::kCompletions;
  if (auto v = r.boolean("stream")) l.stream = *v;
  parse_llm_arrivals(r, ctx, l);
  if (auto v = duration_of_at_least(r, "duration", std::chrono::milliseconds(1), "1ms")) l.duration = *v;
  if (const json* v = r.raw("input")) parse_length(ctx, *v, r.path_of("input"), l.input);
  if (const json* v = r.raw("output")) parse_length(ctx, *v, r.path_of("output"), l.output);
  if (auto v = r.boolean("ignore_eos")) l.ignore_eos = *v;
  if (auto v = r.string("dataset")) {
    if (v->empty()) ctx.error(r.path_of("dataset"), "expected a path to a JSONL file of prompts");
    else l.dataset = *v;
  }
  if (const json* v = r.raw("slo")) parse_slo(ctx, *v, l.slo);
  if (auto v = duration_of_at_least(r, "timeout", std::chrono::milliseconds(1), "1ms")) l.timeout = *v;
  if (auto v = duration_of_at_least(r, "window", std::chrono::milliseconds(100), "100ms")) l.window = *v;
  if (const json* v = r.raw("find_peak")) {
    bench::llm::PeakSearchSettings p;
    parse_find_peak(ctx, *v, p);
    l.find_peak = p;
  }
}

}  // namespace chaosbench::harness
