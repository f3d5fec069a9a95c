// How a setting's value is spelt on a worker's command line (settings_table.h): a codec
// has the type Boost reads (Po), encode (the value as the launcher writes it), declared
// (the default a worker shows) and decode (the value back, throwing
// std::invalid_argument "--<flag>: ..." for one that does not parse). FlagCodec<T> is the
// spelling of a type; the named codecs below are the spellings a type may have besides.
#pragma once

#include <chrono>
#include <cstdint>
#include <fmt/format.h>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include "bench/common/flag_values.h"
#include "common/values/units.h"

namespace chaosbench::bench {

template <class T>
struct is_optional : std::false_type {};
template <class T>
struct is_optional<std::optional<T>> : std::true_type {};

template <class T>
struct FlagCodec;

// Integers and booleans as Boost reads them; a bool as 0 or 1.
template <class T>
  requires std::is_integral_v<T>
struct FlagCodec<T> {
  using Po = T;
  std::string encode(T v) const {
    if constexpr (std::is_same_v<T, bool>) return v ? "1" : "0";
    else return std::to_string(v);
  }
  Po declared(T v) const { return v; }
  T decode(Po v, const char*) const { return v; }
};

// Real numbers in their shortest round-trip spelling.
template <class T>
  requires std::is_floating_point_v<T>
struct FlagCodec<T> {
  using Po = T;
  std::string encode(T v) const { return fmt::format("{}", v); }
  Po declared(T v) const { return v; }
  T decode(Po v, const char*) const { return v; }
};

template <>
struct FlagCodec<std::string> {
  using Po = std::string;
  std::string encode(const std::string& v) const { return v; }
  Po declared(const std::string& v) const { return v; }
  std::string decode(const Po& v, const char*) const { return v; }
};

// Comma-separated, empty items skipped.
template <>
struct FlagCodec<std::vector<std::string>> {
  using Po = std::string;
  std::string encode(const std::vector<std::string>& v) const { return join_list(v); }
  Po declared(const std::vector<std::string>& v) const { return join_list(v); }
  std::vector<std::string> decode(const Po& v, const char*) const { return split_list(v); }
};

template <>
struct FlagCodec<std::vector<int>> {
  using Po = std::string;
  std::string encode(const std::vector<int>& v) const { return join_list(v); }
  Po declared(const std::vector<int>& v) const { return join_list(v); }
  std::vector<int> decode(const Po& v, const char* flag) const { return int_list(v, flag); }
};

// "1048576B" written, "1MiB" shown; any unit read.
template <>
struct FlagCodec<common::Size> {
  using Po = std::string;
  std::string encode(common::Size v) const { return size_flag(v); }
  Po declared(common::Size v) const { return common::to_string(v); }
  common::Size decode(const Po& v, const char* flag) const;
};

// An optional value is spelt as its value (settings_table.h writes it only when set).
template <class T>
struct FlagCodec<std::optional<T>> : FlagCodec<T> {};

// A duration as whole milliseconds ("--timeout-ms 30000"); a negative one reads as zero
// when clamp_negative; one that is not positive is refused when positive.
struct MillisCodec {
  using Po = long;
  bool clamp_negative = false;
  bool positive = false;
  std::string encode(common::Duration d) const { return ms_flag(d); }
  Po declared(common::Duration d) const { return whole_ms(d); }
  common::Duration decode(Po v, const char* flag) const;
};

// A boolean spelt true or false (Boost reads 0 and 1 too).
struct BoolWordsCodec {
  using Po = bool;
  std::string encode(bool v) const { return v ? "true" : "false"; }
  Po declared(bool v) const { return v; }
  bool decode(Po v, const char*) const { return v; }
};

// A TCP port held in an int, read as 0 to 65535.
struct PortCodec {
  using Po = unsigned short;
  std::string encode(int v) const { return std::to_string(v); }
  Po declared(int v) const { return static_cast<Po>(v); }
  int decode(Po v, const char*) const { return v; }
};

// A duration as whole microseconds, at least `min` (1: "a positive number of microseconds").
struct MicrosCodec {
  using Po = long;
  long min = 0;
  std::string encode(common::Duration d) const { return std::to_string(declared(d)); }
  Po declared(common::Duration d) const {
    return static_cast<long>(std::chrono::duration_cast<std::chrono::microseconds>(d.value).count());
  }
  common::Duration decode(Po v, const char* flag) const;
};

// A duration in its own spelling ("10000ms" written, "10s" shown), any unit read.
struct DurationTextCodec {
  using Po = std::string;
  std::string encode(common::Duration d) const { return ms_flag(d) + "ms"; }
  Po declared(common::Duration d) const { return common::to_string(d); }
  common::Duration decode(const Po& v, const char* flag) const;
};

// A value among named choices (an enum, a mode, a string of a fixed set): its name
// written and read; any other name is "--<flag>: expected a, b or c, got \"x\"".
template <class T>
struct ChoiceCodec {
  using Po = std::string;
  std::vector<std::pair<std::string, T>> names;
  std::string encode(const T& v) const {
    for (const auto& [name, value] : names)
      if (value == v) return name;
    throw std::logic_error("a setting's value has no name among its choices");
  }
  Po declared(const T& v) const { return encode(v); }
  T decode(const Po& text, const char* flag) const {
    for (const auto& [name, value] : names)
      if (name == text) return value;
    std::string list;
    for (std::size_t i = 0; i < names.size(); ++i)
      list += (i == 0 ? "" : i + 1 == names.size() ? " or " : ", ") + names[i].first;
    throw std::invalid_argument(fmt::format("--{}: expected {}, got \"{}\"", flag, list, text));
  }
};

// Choices that are their own names (a string setting of a fixed set).
inline ChoiceCodec<std::string> choices_of(std::initializer_list<const char*> names) {
  ChoiceCodec<std::string> c;
  for (const char* n : names) c.names.emplace_back(n, n);
  return c;
}

}  // namespace chaosbench::bench
