#include "bench/llm/load/llm_load_settings.h"

#include <cstdlib>
#include <stdexcept>

#include <fmt/format.h>

#include <boost/program_options/options_description.hpp>
#include <boost/program_options/variables_map.hpp>

#include "bench/common/flag_values.h"

namespace chaosbench::bench::llm {

namespace po = boost::program_options;

namespace {

// Equal as flags are: only the fields the kind draws from (length_flag writes no others),
// so a uniform spec's unused mean does not make a decoded copy differ.
bool same(const LengthSpec& a, const LengthSpec& b) {
  if (a.kind != b.kind || a.max != b.max) return false;
  switch (a.kind) {
    case LengthDistribution::kFixed: return a.mean == b.mean;
    case LengthDistribution::kUniform: return a.low == b.low && a.high == b.high;
    case LengthDistribution::kNormal:
    case LengthDistribution::kLognormal: return a.mean == b.mean && a.stddev == b.stddev;
  }
  return false;
}

std::string api_name(OpenAiEndpoint e) { return e == OpenAiEndpoint::kChatCompletions ? "chat" : "completions"; }

double number(const std::string& s, const std::string& flag, const std::string& text) {
  char* end = nullptr;
  const double v = std::strtod(s.c_str(), &end);
  if (s.empty() || end != s.c_str() + s.size())
    throw std::invalid_argument(fmt::format("--{}: expected a number in \"{}\", got \"{}\"", flag, text, s));
  return v;
}

common::Duration ms_value(const po::variables_map& vm, const char* name) {
  const long ms = vm[name].as<long>();
  if (ms <= 0) throw std::invalid_argument(fmt::format("--{}: expected a positive number of milliseconds", name));
  return common::Duration{std::chrono::milliseconds(ms)};
}

std::optional<common::Duration> optional_ms(const po::variables_map& vm, const char* name) {
  if (!vm.count(name)) return std::nullopt;
  return ms_value(vm, name);
}

}  // namespace

std::string_view to_string(Arrival a) {
  switch (a) {
    case Arrival::kPoisson: return "poisson";
    case Arrival::kConstant: return "constant";
    case Arrival::kConcurrency: return "concurrency";
  }
  return "poisson";
}

std::optional<Arrival> parse_arrival(std::string_view s) {
  for (auto a : {Arrival::kPoisson, Arrival::kConstant, Arrival::kConcurrency})
    if (to_string(a) == s) return a;
  return std::nullopt;
}

bool LlmLoadSettings::operator==(const LlmLoadSettings& o) const {
  auto same_slo = [](const Slo& a, const Slo& b) { return a.ttft == b.ttft && a.tpot == b.tpot && a.e2e == b.e2e; };
  return api == o.api && stream == o.stream && arrival == o.arrival && rate == o.rate &&
         concurrency == o.concurrency && duration == o.duration && same(input, o.input) && same(output, o.output) &&
         ignore_eos == o.ignore_eos && dataset == o.dataset && same_slo(slo, o.slo) && timeout == o.timeout &&
         window == o.window && max_in_flight == o.max_in_flight && find_peak == o.find_peak;
}

std::string length_flag(const LengthSpec& s) {
  std::string out;
  switch (s.kind) {
    case LengthDistribution::kFixed: out = fmt::format("fixed:{}", s.mean); break;
    case LengthDistribution::kUniform: out = fmt::format("uniform:{}:{}", s.low, s.high); break;
    case LengthDistribution::kNormal: out = fmt::format("normal:{}:{}", s.mean, s.stddev); break;
    case LengthDistribution::kLognormal: out = fmt::format("lognormal:{}:{}", s.mean, s.stddev); break;
  }
  if (s.max != LengthSpec{}.max) out += fmt::format(",max={}", s.max);
  return out;
}

LengthSpec parse_length_flag(const std::string& text, const char* flag) {
  LengthSpec s;
  std::string body = text;
  if (auto comma = body.find(",max="); comma != std::string::npos) {
    s.max = static_cast<std::int64_t>(number(body.substr(comma + 5), flag, text));
    body.resize(comma);
  }
  std::vector<std::string> f;
  for (std::size_t at = 0;;) {
    const auto colon = body.find(':', at);
    f.push_back(body.substr(at, colon == std::string::npos ? std::string::npos : colon - at));
    if (colon == std::string::npos) break;
    at = colon + 1;
  }
  const std::string& kind = f.front();
  const bool two = f.size() == 3, one = f.size() == 2;
  if (kind == "fixed" && one) {
    s.kind = LengthDistribution::kFixed;
    s.mean = number(f[1], flag, text);
  } else if (kind == "uniform" && two) {
    s.kind = LengthDistribution::kUniform;
    s.low = static_cast<std::int64_t>(number(f[1], flag, text));
    s.high = static_cast<std::int64_t>(number(f[2], flag, text));
  } else if ((kind == "normal" || kind == "lognormal") && two) {
    s.kind = kind == "normal" ? LengthDistribution::kNormal : LengthDistribution::kLognormal;
    s.mean = number(f[1], flag, text);
    s.stddev = number(f[2], flag, text);
  } else {
    throw std::invalid_argument(fmt::format(
        "--{}: expected fixed:N, uniform:LOW:HIGH, normal:MEAN:SD or lognormal:MEAN:SD (then ,max=N), got \"{}\"",
        flag, text));
  }
  if (auto why = validate(s); !why.empty()) throw std::invalid_argument(fmt::format("--{}: {}", flag, why));
  return s;
}

std::vector<std::string> encode_llm_load_settings(const LlmLoadSettings& s) {
  std::vector<std::string> out{"--api", api_name(s.api),
                               "--stream", s.stream ? "true" : "false",
                               "--arrival", std::string(to_string(s.arrival)),
                               "--rate", fmt::format("{}", s.rate),
                               "--concurrency", std::to_string(s.concurrency),
                               "--duration-ms", ms_flag(s.duration),
                               "--input", length_flag(s.input),
                               "--output", length_flag(s.output),
                               "--ignore-eos", s.ignore_eos ? "true" : "false",
                               "--timeout-ms", ms_flag(s.timeout),
                               "--window-ms", ms_flag(s.window),
                               "--max-in-flight", std::to_string(s.max_in_flight)};
  if (!s.dataset.empty()) out.insert(out.end(), {"--dataset", s.dataset});
  if (s.slo.ttft) out.insert(out.end(), {"--slo-ttft-ms", ms_flag(*s.slo.ttft)});
  if (s.slo.tpot) out.insert(out.end(), {"--slo-tpot-us", std::to_string(s.slo.tpot->value.count() / 1000)});
  if (s.slo.e2e) out.insert(out.end(), {"--slo-e2e-ms", ms_flag(*s.slo.e2e)});
  if (const auto& p = s.find_peak) {
    out.insert(out.end(), {"--find-peak", "true",
                           "--peak-start-rate", fmt::format("{}", p->start_rate),
                           "--peak-target", fmt::format("{}", p->target_attainment),
                           "--peak-precision", fmt::format("{}", p->precision),
                           "--peak-trial-ms", ms_flag(p->trial),
                           "--peak-max-trials", std::to_string(p->max_trials)});
  }
  return out;
}

void add_llm_load_settings_flags(po::options_description& options) {
  const LlmLoadSettings d;
  const PeakSearchSettings p;
  options.add_options()
      ("api", po::value<std::string>()->default_value(api_name(d.api)), "completions or chat")
      ("stream", po::value<bool>()->default_value(d.stream), "stream the answers (server-sent events)")
      ("arrival", po::value<std::string>()->default_value(std::string(to_string(d.arrival))),
       "poisson, constant or concurrency")
      ("rate", po::value<double>()->default_value(d.rate), "poisson/constant: requests per second")
      ("concurrency", po::value<int>()->default_value(d.concurrency), "concurrency: streams in flight")
      ("duration-ms", po::value<long>()->default_value(whole_ms(d.duration)), "how long requests are issued")
      ("input", po::value<std::string>()->default_value(length_flag(d.input)), "prompt length distribution")
      ("output", po::value<std::string>()->default_value(length_flag(d.output)), "output length (max_tokens) distribution")
      ("ignore-eos", po::value<bool>()->default_value(d.ignore_eos), "ask for exactly max_tokens")
      ("dataset", po::value<std::string>(), "JSONL prompt file instead of synthetic prompts")
      ("slo-ttft-ms", po::value<long>(), "SLO: time to first token")
      ("slo-tpot-us", po::value<long>(), "SLO: time per output token, microseconds")
      ("slo-e2e-ms", po::value<long>(), "SLO: end-to-end latency")
      ("timeout-ms", po::value<long>()->default_value(whole_ms(d.timeout)), "per request, from its scheduled time")
      ("window-ms", po::value<long>()->default_value(whole_ms(d.window)), "metrics every this long")
      ("max-in-flight", po::value<int>()->default_value(d.max_in_flight), "open-loop: requests in flight at most")
      ("find-peak", po::value<bool>()->default_value(false), "search the highest rate meeting the SLO")
      ("peak-start-rate", po::value<double>()->default_value(p.start_rate), "find-peak: first trial's rate")
      ("peak-target", po::value<double>()->default_value(p.target_attainment), "find-peak: attainment to meet, %")
      ("peak-precision", po::value<double>()->default_value(p.precision), "find-peak: relative bracket width")
      ("peak-trial-ms", po::value<long>()->default_value(whole_ms(p.trial)), "find-peak: each trial's length")
      ("peak-max-trials", po::value<int>()->default_value(p.max_trials), "find-peak: at most this many trials");
}

LlmLoadSettings read_llm_load_settings(const po::variables_map& vm) {
  LlmLoadSettings s;
  const auto api = vm["api"].as<std::string>();
  if (api != "completions" && api != "chat") throw std::invalid_argument("--api: expected completions or chat");
  s.api = api == "chat" ? OpenAiEndpoint::kChatCompletions : OpenAiEndpoint::kCompletions;
  s.stream = vm["stream"].as<bool>();
  auto arrival = parse_arrival(vm["arrival"].as<std::string>());
  if (!arrival) throw std::invalid_argument("--arrival: expected poisson, constant or concurrency");
  s.arrival = *arrival;
  s.rate = vm["rate"].as<double>();
  if (!(s.rate > 0 && s.rate <= 1e6)) throw std::invalid_argument("--rate: expected a rate in (0, 1e6]");
  s.concurrency = vm["concurrency"].as<int>();
  if (s.concurrency < 1 || s.concurrency > 100000) throw std::invalid_argument("--concurrency: from 1 to 100000");
  s.duration = ms_value(vm, "duration-ms");
  s.input = parse_length_flag(vm["input"].as<std::string>(), "input");
  s.output = parse_length_flag(vm["output"].as<std::string>(), "output");
  s.ignore_eos = vm["ignore-eos"].as<bool>();
  if (vm.count("dataset")) s.dataset = vm["dataset"].as<std::string>();
  s.slo.ttft = optional_ms(vm, "slo-ttft-ms");
  if (vm.count("slo-tpot-us")) {
    const long us = vm["slo-tpot-us"].as<long>();
    if (us <= 0) throw std::invalid_argument("--slo-tpot-us: expected a positive number of microseconds");
    s.slo.tpot = common::Duration{std::chrono::microseconds(us)};
  }
  s.slo.e2e = optional_ms(vm, "slo-e2e-ms");
  s.timeout = ms_value(vm, "timeout-ms");
  s.window = ms_value(vm, "window-ms");
  s.max_in_flight = vm["max-in-flight"].as<int>();
  if (s.max_in_flight < 1 || s.max_in_flight > 100000) throw std::invalid_argument("--max-in-flight: from 1 to 100000");
  if (vm["find-peak"].as<bool>()) {
    PeakSearchSettings p;
    p.start_rate = vm["peak-start-rate"].as<double>();
    p.target_attainment = vm["peak-target"].as<double>();
    p.precision = vm["peak-precision"].as<double>();
    p.trial = ms_value(vm, "peak-trial-ms");
    p.max_trials = vm["peak-max-trials"].as<int>();
    if (!(p.start_rate > 0)) throw std::invalid_argument("--peak-start-rate: expected a positive rate");
    if (!(p.target_attainment > 0 && p.target_attainment <= 100)) throw std::invalid_argument("--peak-target: expected a percentage in (0, 100]");
    if (!(p.precision > 0 && p.precision < 1)) throw std::invalid_argument("--peak-precision: expected a fraction in (0, 1)");
    if (p.max_trials < 2 || p.max_trials > 100) throw std::invalid_argument("--peak-max-trials: from 2 to 100");
    s.find_peak = p;
  }
  return s;
}

LlmLoadSettings decode_llm_load_settings(const std::vector<std::string>& flags) {
  return decode_flags(flags, add_llm_load_settings_flags, read_llm_load_settings);
}

}  // namespace chaosbench::bench::llm
