// Fault parameters as declarations and typed values. A fault type declares its parameters
// (name, kind, default, meaning); the scenario parser reads them generically, rejecting
// unknown keys, and `chaosbench faults` prints the same declarations. Faults never see JSON.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <variant>

#include "common/values/units.h"

namespace chaosbench::faults {

// The quantities parameters hold (common/values/units.h), by their short names in fault code.
using common::Duration;
using common::Percent;
using common::Rate;
using common::Size;

enum class ParamKind { kDuration, kRate, kSize, kPercent, kInteger, kNumber, kString, kBool };

std::string_view to_string(ParamKind kind);  // "duration", "rate", ...

struct ParamSpec {
  std::string_view name;
  ParamKind kind;
  bool required = false;
  std::string_view default_text;  // as a scenario would write it; "" when none
  std::string_view description;
  double min = 0;                 // integers and numbers: inclusive bounds
  double max = 1e18;
};

using ParamValue = std::variant<Duration, Rate, Size, Percent, std::int64_t, double, std::string, bool>;

// The parameters of one fault, by name, already typed and range-checked.
class Params {
 public:
  void set(std::string name, ParamValue value) { values_[std::move(name)] = std::move(value); }
  bool has(std::string_view name) const { return values_.find(std::string(name)) != values_.end(); }

  // Throws std::logic_error when absent or of another kind: the parser guarantees both
  // for declared parameters, so this is a programming error.
  template <class T>
  const T& get(std::string_view name) const {
    auto it = values_.find(std::string(name));
    if (it == values_.end()) throw std::logic_error("fault parameter not set: " + std::string(name));
    return std::get<T>(it->second);
  }

  const std::map<std::string, ParamValue>& values() const { return values_; }

 private:
  std::map<std::string, ParamValue> values_;
};

std::string to_string(const ParamValue& value);

// A declared default, typed as if the scenario had written it (nullopt when `p` has
// none); faults then read every parameter that has a default without checking has().
// The table's defaults are tested to parse (registry test), so a default that does not
// is a programming error: std::logic_error.
std::optional<ParamValue> default_value(const ParamSpec& p);

// Every declared default of `specs`: the Params of a fault built outside a scenario
// (cluster.link), before its own values are set.
Params defaults_of(std::span<const ParamSpec> specs);

}  // namespace chaosbench::faults
