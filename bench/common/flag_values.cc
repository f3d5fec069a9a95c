#include "bench/common/flag_values.h"

#include <sstream>
#include <stdexcept>

#include <boost/program_options/parsers.hpp>
#include <fmt/format.h>
#include <fmt/ranges.h>

namespace chaosbench::bench {

namespace po = boost::program_options;

std::vector<std::string> split_list(const std::string& s) {
  std::vector<std::string> out;
  std::stringstream in(s);
  std::string item;
  while (std::getline(in, item, ','))
    if (!item.empty()) out.push_back(item);
  return out;
}

std::vector<int> int_list(const std::string& s, const char* option) {
  std::vector<int> out;
  for (const auto& item : split_list(s)) {
    std::size_t used = 0;
    try {
      out.push_back(std::stoi(item, &used));
    } catch (const std::exception&) {
      used = 0;
    }
    if (used != item.size())
      throw std::invalid_argument(std::string("--") + option + ": expected comma-separated integers, got \"" + s + "\"");
  }
  return out;
}

std::string join_list(const std::vector<int>& v) { return fmt::format("{}", fmt::join(v, ",")); }
std::string join_list(const std::vector<std::string>& v) { return fmt::format("{}", fmt::join(v, ",")); }

std::string size_flag(common::Size s) { return fmt::format("{}B", s.bytes); }

long whole_ms(common::Duration d) {
  return static_cast<long>(std::chrono::duration_cast<std::chrono::milliseconds>(d.value).count());
}

std::string ms_flag(common::Duration d) { return std::to_string(whole_ms(d)); }

common::Size read_size_flag(const po::variables_map& vm, const char* name) {
  auto parsed = common::parse_size(vm[name].as<std::string>());
  if (!parsed) throw std::invalid_argument(std::string("--") + name + ": " + parsed.error);
  return *parsed;
}

po::variables_map parse_flags(const std::vector<std::string>& flags, const po::options_description& options) {
  po::variables_map vm;
  try {
    po::store(po::command_line_parser(flags).options(options).run(), vm);
    po::notify(vm);
  } catch (const po::error& e) {
    throw std::invalid_argument(e.what());
  }
  return vm;
}

}  // namespace chaosbench::bench
