#include "bench/load/load_settings.h"

#include "bench/common/settings_table.h"

namespace chaosbench::bench::load {
namespace {

using LS = LoadSettings;

ChoiceCodec<LoadScenario> scenario_names() {
  ChoiceCodec<LoadScenario> c;
  for (auto s : {LoadScenario::kServer, LoadScenario::kOffline, LoadScenario::kSingleStream}) c.names.emplace_back(to_string(s), s);
  return c;
}

const SettingsTable<LS>& load_settings_table() {
  static const SettingsTable<LS> table = [] {
    SettingsTable<LS> t;
    t.add("scenario", &LS::scenario, "server, offline or single-stream", scenario_names())
        .add("qps", &LS::qps, "server: mean Poisson arrival rate")
        .add("duration", &LS::duration, "how long to issue requests", DurationTextCodec{})
        .add("rows", &LS::rows, "rows per infer request")
        .add("connections", &LS::connections, "keep-alive connections per endpoint")
        .add("timeout-ms", &LS::timeout, "per-attempt timeout", MillisCodec{})
        .add("window-ms", &LS::window, "infer/throughput and infer/error_rate every this long", MillisCodec{});
    return t;
  }();
  return table;
}

}  // namespace

std::vector<std::string> encode_load_settings(const LoadSettings& s) { return load_settings_table().encode(s); }

void add_load_settings_flags(boost::program_options::options_description& options) {
  load_settings_table().declare(options);
}

LoadSettings read_load_settings(const boost::program_options::variables_map& vm) { return load_settings_table().read(vm); }

LoadSettings decode_load_settings(const std::vector<std::string>& flags) {
  return decode_flags(flags, add_load_settings_flags, read_load_settings);
}

}  // namespace chaosbench::bench::load
