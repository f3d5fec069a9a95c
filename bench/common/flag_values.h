// The value spellings the workload settings use on a worker command line
// (bench/*/*_settings.cc): comma-separated lists, sizes with units, milliseconds. Decoders
// throw std::invalid_argument naming the flag, which the worker shows as a usage error.
#pragma once

#include <boost/program_options/options_description.hpp>
#include <boost/program_options/variables_map.hpp>
#include <string>
#include <vector>

#include "common/values/units.h"

namespace chaosbench::bench {

// "a,b,,c" -> {"a", "b", "c"}: empty items are skipped.
std::vector<std::string> split_list(const std::string& s);
// "256,1024,16" -> {256, 1024, 16}; throws for anything that is not a whole integer:
// "--<option>: expected comma-separated integers, got \"...\"".
std::vector<int> int_list(const std::string& s, const char* option);
// {256, 1024, 16} -> "256,1024,16"; {"a", "b"} -> "a,b".
std::string join_list(const std::vector<int>& v);
std::string join_list(const std::vector<std::string>& v);

// "1024B" for a size flag; the whole milliseconds of a duration (30000, "30000").
std::string size_flag(common::Size s);
long whole_ms(common::Duration d);
std::string ms_flag(common::Duration d);
// The size in flag `name` ("1MiB"); throws "--<name>: <why>".
common::Size read_size_flag(const boost::program_options::variables_map& vm, const char* name);

// Parses `flags` against `options` into a variables map; throws std::invalid_argument
// with Boost's message for unknown flags or values of the wrong type.
boost::program_options::variables_map parse_flags(const std::vector<std::string>& flags,
                                                  const boost::program_options::options_description& options);

// A settings type's decode: declares its flags with `add`, parses `flags`, reads them back
// with `read`. Throws std::invalid_argument as parse_flags and `read` do.
template <class Settings>
Settings decode_flags(const std::vector<std::string>& flags,
                      void (*add)(boost::program_options::options_description&),
                      Settings (*read)(const boost::program_options::variables_map&)) {
  boost::program_options::options_description options;
  add(options);
  return read(parse_flags(flags, options));
}

}  // namespace chaosbench::bench
