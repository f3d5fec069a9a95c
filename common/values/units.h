// Typed quantities used by scenarios and fault parameters: durations, rates, sizes and
// percentages. Strings such as "250us", "100mbit", "64KiB" and "0.5%" are parsed once,
// here, into these values; nothing downstream compares unit strings.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace chaosbench::common {

// The outcome of parsing a quantity: a value, or a message saying what was expected.
// (std::expected is C++23; g++ 12 does not have it.)
template <class T>
struct Parsed {
  std::optional<T> value;
  std::string error;
  explicit operator bool() const { return value.has_value(); }
  const T& operator*() const { return *value; }
  const T* operator->() const { return &*value; }
};

// A span of time, nanosecond resolution, never negative.
struct Duration {
  std::chrono::nanoseconds value{0};
  double seconds() const { return std::chrono::duration<double>(value).count(); }
  auto operator<=>(const Duration&) const = default;
};

// A data rate in bits per second ("100mbit" is 100'000'000; tc's convention: k = 1000).
struct Rate {
  std::uint64_t bits_per_second = 0;
  auto operator<=>(const Rate&) const = default;
};

// A size in bytes ("64KiB" is 65536, "1MB" is 1'000'000).
struct Size {
  std::uint64_t bytes = 0;
  auto operator<=>(const Size&) const = default;
};

// A percentage in [0, 100] ("0.5%" is 0.5).
struct Percent {
  double value = 0;
  double fraction() const { return value / 100.0; }
  auto operator<=>(const Percent&) const = default;
};

// Each parser accepts exactly "<number><unit>" with no spaces; on failure the error says
// what was expected (for example: expected a duration such as "250us", "1.5s" or "2m").
Parsed<Duration> parse_duration(std::string_view text);
Parsed<Rate> parse_rate(std::string_view text);
Parsed<Size> parse_size(std::string_view text);
Parsed<Percent> parse_percent(std::string_view text);

// Canonical spellings, used in logs, results and error messages ("1.5s", "100mbit").
std::string to_string(Duration d);
std::string to_string(Rate r);
std::string to_string(Size s);
std::string to_string(Percent p);

}  // namespace chaosbench::common
