#include "common/values/units.h"

#include <array>
#include <cmath>
#include <cstdlib>
#include <fmt/format.h>

namespace chaosbench::common {
namespace {

struct UnitFactor {
  std::string_view unit;
  double factor;
};

// Splits "<number><unit>" into its parts. The number is a plain decimal (digits, one
// optional '.', no sign, no exponent); anything else is rejected so that "-1s", "1e3ms"
// and "20 ms" fail loudly instead of meaning something surprising.
bool split_number(std::string_view text, double& number, std::string_view& unit) {
  std::size_t i = 0;
  bool digits = false, dot = false;
  while (i < text.size()) {
    char c = text[i];
    if (c >= '0' && c <= '9') {
      digits = true;
    } else if (c == '.' && !dot) {
      dot = true;
    } else {
      break;
    }
    ++i;
  }
  if (!digits) return false;
  std::string num(text.substr(0, i));
  char* end = nullptr;
  number = std::strtod(num.c_str(), &end);
  if (end != num.c_str() + num.size() || !std::isfinite(number)) return false;
  unit = text.substr(i);
  return true;
}

template <class T, std::size_t N>
Parsed<T> parse_with(std::string_view text, const std::array<UnitFactor, N>& units,
                     std::string_view what, std::string_view examples,
                     T (*make)(double), double max_base, std::string_view max_text) {
  Parsed<T> out;
  auto fail = [&](std::string detail) {
    out.error = fmt::format("expected {} such as {}; {}", what, examples, detail);
    return out;
  };
  if (text.empty()) return fail("got an empty string");
  if (text.front() == '-') return fail(fmt::format("got \"{}\": a negative value", text));
  if (text.find(' ') != std::string_view::npos || text.find('\t') != std::string_view::npos)
    return fail(fmt::format("got \"{}\": no spaces between number and unit", text));
  double number = 0;
  std::string_view unit;
  if (!split_number(text, number, unit))
    return fail(fmt::format("got \"{}\": it does not start with a number", text));
  if (unit.empty()) return fail(fmt::format("got \"{}\": the unit is missing", text));
  for (const auto& u : units) {
    if (u.unit == unit) {
      // Beyond the type's range the conversion would wrap (llround of a huge double).
      if (number * u.factor > max_base)
        return fail(fmt::format("got \"{}\": too large (at most {})", text, max_text));
      out.value = make(number * u.factor);
      return out;
    }
  }
  std::string known;
  for (const auto& u : units) known += fmt::format("{}{}", known.empty() ? "" : ", ", u.unit);
  return fail(fmt::format("got unknown unit \"{}\" (known: {})", unit, known));
}

constexpr std::array<UnitFactor, 7> kDurationUnits{{{"ns", 1.0},
                                                    {"us", 1e3},
                                                    {"ms", 1e6},
                                                    {"s", 1e9},
                                                    {"m", 60e9},
                                                    {"min", 60e9},
                                                    {"h", 3600e9}}};
// tc(8) conventions: bit rates with decimal prefixes; "bps" is bytes per second.
constexpr std::array<UnitFactor, 10> kRateUnits{{{"bit", 1.0},
                                                 {"kbit", 1e3},
                                                 {"mbit", 1e6},
                                                 {"gbit", 1e9},
                                                 {"tbit", 1e12},
                                                 {"bps", 8.0},
                                                 {"kbps", 8e3},
                                                 {"mbps", 8e6},
                                                 {"gbps", 8e9},
                                                 {"tbps", 8e12}}};
constexpr std::array<UnitFactor, 9> kSizeUnits{{{"B", 1.0},
                                                {"KB", 1e3},
                                                {"MB", 1e6},
                                                {"GB", 1e9},
                                                {"TB", 1e12},
                                                {"KiB", 1024.0},
                                                {"MiB", 1024.0 * 1024},
                                                {"GiB", 1024.0 * 1024 * 1024},
                                                {"TiB", 1024.0 * 1024 * 1024 * 1024}}};
constexpr std::array<UnitFactor, 1> kPercentUnits{{{"%", 1.0}}};

std::string trim_number(double v) {
  std::string s = fmt::format("{:.6f}", v);
  while (!s.empty() && s.back() == '0') s.pop_back();
  if (!s.empty() && s.back() == '.') s.pop_back();
  return s;
}

}  // namespace

Parsed<Duration> parse_duration(std::string_view text) {
  return parse_with<Duration>(text, kDurationUnits, "a duration", "\"250us\", \"1.5s\" or \"2m\"",
                              [](double ns) {
                                return Duration{std::chrono::nanoseconds(std::llround(ns))};
                              },
                              1e18, "1000000000s, about 31 years");
}

Parsed<Rate> parse_rate(std::string_view text) {
  return parse_with<Rate>(
      text, kRateUnits, "a rate", "\"100mbit\" or \"1gbit\"",
      [](double bps) { return Rate{static_cast<std::uint64_t>(std::llround(bps))}; }, 1e18, "1000000tbit");
}

Parsed<Size> parse_size(std::string_view text) {
  auto out = parse_with<Size>(text, kSizeUnits, "a size", "\"64KiB\", \"1MB\" or \"512B\"",
                              [](double b) { return Size{static_cast<std::uint64_t>(std::llround(b))}; },
                              1e18, "1000000TB");
  return out;
}

Parsed<Percent> parse_percent(std::string_view text) {
  auto out = parse_with<Percent>(text, kPercentUnits, "a percentage", "\"0.5%\" or \"10%\"",
                                 [](double p) { return Percent{p}; }, 1e300, "100%");
  if (out && out->value > 100.0) {
    out.error = fmt::format("expected a percentage between 0% and 100%; got \"{}\"", text);
    out.value.reset();
  }
  return out;
}

std::string to_string(Duration d) {
  auto ns = d.value.count();
  if (ns == 0) return "0s";
  if (ns % 60'000'000'000 == 0 && ns >= 60'000'000'000) return fmt::format("{}m", ns / 60'000'000'000);
  if (ns >= 1'000'000'000) return trim_number(ns / 1e9) + "s";
  if (ns >= 1'000'000) return trim_number(ns / 1e6) + "ms";
  if (ns >= 1'000) return trim_number(ns / 1e3) + "us";
  return fmt::format("{}ns", ns);
}

std::string to_string(Rate r) {
  auto b = static_cast<double>(r.bits_per_second);
  if (b >= 1e9) return trim_number(b / 1e9) + "gbit";
  if (b >= 1e6) return trim_number(b / 1e6) + "mbit";
  if (b >= 1e3) return trim_number(b / 1e3) + "kbit";
  return trim_number(b) + "bit";
}

std::string to_string(Size s) {
  auto b = s.bytes;
  constexpr std::uint64_t kKi = 1024;
  if (b >= kKi * kKi * kKi && b % (kKi * kKi * kKi) == 0) return fmt::format("{}GiB", b / (kKi * kKi * kKi));
  if (b >= kKi * kKi && b % (kKi * kKi) == 0) return fmt::format("{}MiB", b / (kKi * kKi));
  if (b >= kKi && b % kKi == 0) return fmt::format("{}KiB", b / kKi);
  return fmt::format("{}B", b);
}

std::string to_string(Percent p) { return trim_number(p.value) + "%"; }

}  // namespace chaosbench::common
