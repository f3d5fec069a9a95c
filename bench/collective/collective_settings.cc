#include "bench/collective/collective_settings.h"

#include <algorithm>

#include <boost/program_options/options_description.hpp>
#include <boost/program_options/variables_map.hpp>

#include "bench/common/flag_values.h"

namespace chaosbench::bench {

namespace po = boost::program_options;

std::vector<std::string> encode_collective_settings(const CollectiveSettings& s) {
  return {"--collectives", join_list(s.collectives),
          "--algorithms", join_list(s.algorithms),
          "--min-size", size_flag(s.min_size),
          "--max-size", size_flag(s.max_size),
          "--factor", std::to_string(s.factor),
          "--warmup", std::to_string(s.warmup_iters),
          "--iters", std::to_string(s.iters),
          "--duration-ms", ms_flag(s.duration),
          "--check", s.check ? "1" : "0",
          "--timeout-ms", ms_flag(s.timeout)};
}

void add_collective_settings_flags(po::options_description& options) {
  const CollectiveSettings d;
  options.add_options()
      ("collectives", po::value<std::string>()->default_value(join_list(d.collectives)), "comma-separated collectives")
      ("algorithms", po::value<std::string>()->default_value(join_list(d.algorithms)), "comma-separated allreduce algorithms")
      ("min-size", po::value<std::string>()->default_value(common::to_string(d.min_size)), "smallest message")
      ("max-size", po::value<std::string>()->default_value(common::to_string(d.max_size)), "largest message")
      ("factor", po::value<std::uint64_t>()->default_value(d.factor), "size step factor")
      ("warmup", po::value<int>()->default_value(d.warmup_iters), "warm-up iterations per size")
      ("iters", po::value<int>()->default_value(d.iters), "timed iterations per size")
      ("duration-ms", po::value<long>()->default_value(whole_ms(d.duration)),
       "repeat the sweep until this long has passed (0: once)")
      ("check", po::value<bool>()->default_value(d.check), "check results (0 or 1)")
      ("timeout-ms", po::value<long>()->default_value(whole_ms(d.timeout)), "gloo operation timeout");
}

CollectiveSettings read_collective_settings(const po::variables_map& vm) {
  CollectiveSettings s;
  s.collectives = split_list(vm["collectives"].as<std::string>());
  s.algorithms = split_list(vm["algorithms"].as<std::string>());
  s.min_size = read_size_flag(vm, "min-size");
  s.max_size = read_size_flag(vm, "max-size");
  s.factor = vm["factor"].as<std::uint64_t>();
  s.warmup_iters = vm["warmup"].as<int>();
  s.iters = vm["iters"].as<int>();
  s.duration = common::Duration{std::chrono::milliseconds(std::max(0L, vm["duration-ms"].as<long>()))};
  s.check = vm["check"].as<bool>();
  s.timeout = common::Duration{std::chrono::milliseconds(vm["timeout-ms"].as<long>())};
  return s;
}

CollectiveSettings decode_collective_settings(const std::vector<std::string>& flags) {
  return decode_flags(flags, add_collective_settings_flags, read_collective_settings);
}

}  // namespace chaosbench::bench
