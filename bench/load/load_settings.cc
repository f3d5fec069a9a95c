#include "bench/load/load_settings.h"

#include <stdexcept>

#include <fmt/format.h>

#include <boost/program_options/options_description.hpp>
#include <boost/program_options/variables_map.hpp>

#include "bench/common/flag_values.h"

namespace chaosbench::bench::load {

namespace po = boost::program_options;

std::vector<std::string> encode_load_settings(const LoadSettings& s) {
  return {"--scenario", to_string(s.scenario),
          "--qps", fmt::format("{}", s.qps),
          "--duration", ms_flag(s.duration) + "ms",
          "--rows", std::to_string(s.rows),
          "--connections", std::to_string(s.connections),
          "--timeout-ms", ms_flag(s.timeout),
          "--window-ms", ms_flag(s.window)};
}

void add_load_settings_flags(po::options_description& options) {
  const LoadSettings d;
  options.add_options()
      ("scenario", po::value<std::string>()->default_value(to_string(d.scenario)), "server, offline or single-stream")
      ("qps", po::value<double>()->default_value(d.qps), "server: mean Poisson arrival rate")
      ("duration", po::value<std::string>()->default_value(common::to_string(d.duration)), "how long to issue requests")
      ("rows", po::value<int>()->default_value(d.rows), "rows per infer request")
      ("connections", po::value<int>()->default_value(d.connections), "keep-alive connections per endpoint")
      ("timeout-ms", po::value<long>()->default_value(whole_ms(d.timeout)), "per-attempt timeout")
      ("window-ms", po::value<long>()->default_value(whole_ms(d.window)), "infer/throughput and infer/error_rate every this long");
}

LoadSettings read_load_settings(const po::variables_map& vm) {
  LoadSettings s;
  auto scenario = parse_load_scenario(vm["scenario"].as<std::string>());
  if (!scenario) throw std::invalid_argument("--scenario: expected server, offline or single-stream");
  s.scenario = *scenario;
  s.qps = vm["qps"].as<double>();
  auto duration = common::parse_duration(vm["duration"].as<std::string>());
  if (!duration) throw std::invalid_argument("--duration: " + duration.error);
  s.duration = *duration;
  s.rows = vm["rows"].as<int>();
  s.connections = vm["connections"].as<int>();
  s.timeout = common::Duration{std::chrono::milliseconds(vm["timeout-ms"].as<long>())};
  s.window = common::Duration{std::chrono::milliseconds(vm["window-ms"].as<long>())};
  return s;
}

LoadSettings decode_load_settings(const std::vector<std::string>& flags) {
  return decode_flags(flags, add_load_settings_flags, read_load_settings);
}

}  // namespace chaosbench::bench::load
