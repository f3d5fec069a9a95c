#include "bench/llm/load/llm_load_settings.h"

#include <cstdlib>
#include <stdexcept>

#include <fmt/format.h>

#include <boost/program_options/options_description.hpp>
#include <boost/program_options/variables_map.hpp>

#include "bench/common/settings_table.h"

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

double number(const std::string& s, const std::string& flag, const std::string& text) {
  char* end = nullptr;
  const double v = std::strtod(s.c_str(), &end);
  if (s.empty() || end != s.c_str() + s.size())
    throw std::invalid_argument(fmt::format("--{}: expected a number in \"{}\", got \"{}\"", flag, text, s));
  return v;
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

namespace {

using LLS = LlmLoadSettings;
using PSS = PeakSearchSettings;

struct LengthCodec {
  using Po = std::string;
  std::string encode(const LengthSpec& v) const { return length_flag(v); }
  Po declared(const LengthSpec& v) const { return length_flag(v); }
  LengthSpec decode(const Po& v, const char* flag) const { return parse_length_flag(v, flag); }
};

ChoiceCodec<Arrival> arrival_names() {
  ChoiceCodec<Arrival> c;
  for (auto a : {Arrival::kPoisson, Arrival::kConstant, Arrival::kConcurrency}) c.names.emplace_back(to_string(a), a);
  return c;
}

std::string settings_within(bool ok, const char* why) { return ok ? "" : why; }

const SettingsTable<PSS>& peak_settings_table() {
  static const SettingsTable<PSS> table = [] {
    SettingsTable<PSS> t;
    t.add("peak-start-rate", &PSS::start_rate, "find-peak: first trial's rate")
        .add("peak-target", &PSS::target_attainment, "find-peak: attainment to meet, %")
        .add("peak-precision", &PSS::precision, "find-peak: relative bracket width")
        .add("peak-trial-ms", &PSS::trial, "find-peak: each trial's length", MillisCodec{false, true})
        .add("peak-max-trials", &PSS::max_trials, "find-peak: at most this many trials")
        .check([](const PSS& p) { return settings_within(p.start_rate > 0, "--peak-start-rate: expected a positive rate"); })
        .check([](const PSS& p) {
          return settings_within(p.target_attainment > 0 && p.target_attainment <= 100,
                        "--peak-target: expected a percentage in (0, 100]");
        })
        .check([](const PSS& p) {
          return settings_within(p.precision > 0 && p.precision < 1, "--peak-precision: expected a fraction in (0, 1)");
        })
        .check([](const PSS& p) {
          return settings_within(p.max_trials >= 2 && p.max_trials <= 100, "--peak-max-trials: from 2 to 100");
        });
    return t;
  }();
  return table;
}

// --find-peak and the search's own flags, written when the search is asked for.
SettingsTable<LLS>::Row find_peak_row() {
  namespace po = boost::program_options;
  SettingsTable<LLS>::Row r;
  r.encode = [](const LLS& s, std::vector<std::string>& out) {
    if (!s.find_peak) return;
    out.insert(out.end(), {"--find-peak", "true"});
    for (auto& f : peak_settings_table().encode(*s.find_peak)) out.push_back(std::move(f));
  };
  r.declare = [](po::options_description& o, const LLS&) {
    o.add_options()("find-peak", po::value<bool>()->default_value(false), "search the highest rate meeting the SLO");
    peak_settings_table().declare(o);
  };
  r.read = [](const po::variables_map& vm, LLS& s) {
    if (vm["find-peak"].as<bool>()) s.find_peak = peak_settings_table().read(vm);
  };
  return r;
}

// In the order the launcher has always written them.
void add_llm_load_rows(SettingsTable<LLS>& t) {
  t.add("api", &LLS::api, "completions or chat",
        ChoiceCodec<OpenAiEndpoint>{{{"completions", OpenAiEndpoint::kCompletions}, {"chat", OpenAiEndpoint::kChatCompletions}}})
      .add("stream", &LLS::stream, "stream the answers (server-sent events)", BoolWordsCodec{})
      .add("arrival", &LLS::arrival, "poisson, constant or concurrency", arrival_names())
      .add("rate", &LLS::rate, "poisson/constant: requests per second")
      .add("concurrency", &LLS::concurrency, "concurrency: streams in flight")
      .add("duration-ms", &LLS::duration, "how long requests are issued", MillisCodec{false, true})
      .add("input", &LLS::input, "prompt length distribution", LengthCodec{})
      .add("output", &LLS::output, "output length (max_tokens) distribution", LengthCodec{})
      .add("ignore-eos", &LLS::ignore_eos, "ask for exactly max_tokens", BoolWordsCodec{})
      .add("timeout-ms", &LLS::timeout, "per request, from its scheduled time", MillisCodec{false, true})
      .add("window-ms", &LLS::window, "metrics every this long", MillisCodec{false, true})
      .add("max-in-flight", &LLS::max_in_flight, "open-loop: requests in flight at most")
      .add_unless_empty("dataset", &LLS::dataset, "JSONL prompt file instead of synthetic prompts")
      .add("slo-ttft-ms", [](LLS& s) -> std::optional<common::Duration>& { return s.slo.ttft; },
           "SLO: time to first token", MillisCodec{false, true})
      .add("slo-tpot-us", [](LLS& s) -> std::optional<common::Duration>& { return s.slo.tpot; },
           "SLO: time per output token, microseconds", MicrosCodec{1})
      .add("slo-e2e-ms", [](LLS& s) -> std::optional<common::Duration>& { return s.slo.e2e; },
           "SLO: end-to-end latency", MillisCodec{false, true})
      .add_row(find_peak_row())
      .check([](const LLS& s) { return settings_within(s.rate > 0 && s.rate <= 1e6, "--rate: expected a rate in (0, 1e6]"); })
      .check([](const LLS& s) {
        return settings_within(s.concurrency >= 1 && s.concurrency <= 100000, "--concurrency: from 1 to 100000");
      })
      .check([](const LLS& s) {
        return settings_within(s.max_in_flight >= 1 && s.max_in_flight <= 100000, "--max-in-flight: from 1 to 100000");
      });
}

const SettingsTable<LLS>& llm_load_settings_table() {
  static const SettingsTable<LLS> table = [] {
    SettingsTable<LLS> t;
    add_llm_load_rows(t);
    return t;
  }();
  return table;
}

}  // namespace

std::vector<std::string> encode_llm_load_settings(const LlmLoadSettings& s) { return llm_load_settings_table().encode(s); }

void add_llm_load_settings_flags(boost::program_options::options_description& options) {
  llm_load_settings_table().declare(options);
}

LlmLoadSettings read_llm_load_settings(const boost::program_options::variables_map& vm) {
  return llm_load_settings_table().read(vm);
}

LlmLoadSettings decode_llm_load_settings(const std::vector<std::string>& flags) {
  return decode_flags(flags, add_llm_load_settings_flags, read_llm_load_settings);
}

}  // namespace chaosbench::bench::llm
