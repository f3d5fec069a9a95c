// JSON values read leniently and numbers written safely, one set for every side: the
// readers of results.json, of history lines and of the BLAS record, and what crosses the
// agent link from a peer. Templates over nlohmann's basic_json, so json and ordered_json
// documents read the same way.
//
// Reading: each getter returns the member `key` of `j` when it is there with the type
// asked for, else the default; none throws, whatever `j` is (an array, null, a string).
// Writing: JSON has no NaN and no infinity, so such a number is written as null.
#pragma once

#include <cmath>
#include <cstdint>
#include <limits>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <type_traits>
#include <vector>

#include "common/values/labels.h"

namespace chaosbench::common {

// `v` as a JSON number, or null when it is not finite.
template <class Json = nlohmann::ordered_json>
Json json_finite(double v) {
  return std::isfinite(v) ? Json(v) : Json(nullptr);
}

// An absent value, or one that is not finite, as null.
template <class Json = nlohmann::ordered_json, class T>
Json json_finite(const std::optional<T>& v) {
  return v ? json_finite<Json>(static_cast<double>(*v)) : Json(nullptr);
}

// Each label with its JSON flavour: a string, an integer or a real number (NaN as null).
template <class Json = nlohmann::ordered_json>
Json labels_to_json(const Labels& labels) {
  Json out = Json::object();
  for (const auto& [k, v] : labels) {
    if (const auto* d = std::get_if<double>(&v)) out[k] = json_finite<Json>(*d);
    else if (const auto* i = std::get_if<std::int64_t>(&v)) out[k] = *i;
    else out[k] = std::get<std::string>(v);
  }
  return out;
}

// The member `key` of `j`, or nullptr when `j` is not an object or has no such member.
template <class Json>
const Json* json_member(const Json& j, const char* key) {
  if (!j.is_object()) return nullptr;
  auto it = j.find(key);
  return it == j.end() ? nullptr : &*it;
}

template <class Json>
std::string json_text(const Json& j, const char* key, std::string dflt = "") {
  const Json* v = json_member(j, key);
  return v && v->is_string() ? v->template get<std::string>() : dflt;
}

template <class Json>
double json_number(const Json& j, const char* key, double dflt = 0) {
  const Json* v = json_member(j, key);
  return v && v->is_number() ? v->template get<double>() : dflt;
}

// A finite number, or nullopt (absent, null, not a number, or too large to be finite).
template <class Json>
std::optional<double> json_optional_number(const Json& j, const char* key) {
  const Json* v = json_member(j, key);
  if (!v || !v->is_number() || !std::isfinite(v->template get<double>())) return std::nullopt;
  return v->template get<double>();
}

// A whole number, clamped to T's range; a number with a fraction, or no number, reads as
// `dflt`.
template <class T, class Json>
T json_integer(const Json& j, const char* key, T dflt = 0) {
  static_assert(std::is_integral_v<T>);
  const Json* v = json_member(j, key);
  if (!v || !v->is_number()) return dflt;
  if (v->is_number_unsigned()) {
    const auto u = v->template get<std::uint64_t>();
    return u > static_cast<std::uint64_t>(std::numeric_limits<T>::max()) ? std::numeric_limits<T>::max()
                                                                         : static_cast<T>(u);
  }
  if (v->is_number_integer()) {
    const auto i = v->template get<std::int64_t>();
    if constexpr (std::is_signed_v<T>) {
      if (i < static_cast<std::int64_t>(std::numeric_limits<T>::min())) return std::numeric_limits<T>::min();
      if (i > static_cast<std::int64_t>(std::numeric_limits<T>::max())) return std::numeric_limits<T>::max();
    } else if (i < 0) {
      return 0;
    } else if (static_cast<std::uint64_t>(i) > static_cast<std::uint64_t>(std::numeric_limits<T>::max())) {
      return std::numeric_limits<T>::max();
    }
    return static_cast<T>(i);
  }
  const double d = v->template get<double>();
  if (!std::isfinite(d) || std::floor(d) != d) return dflt;
  if (d <= static_cast<double>(std::numeric_limits<T>::min())) return std::numeric_limits<T>::min();
  if (d >= static_cast<double>(std::numeric_limits<T>::max())) return std::numeric_limits<T>::max();
  return static_cast<T>(d);
}

template <class Json>
bool json_flag(const Json& j, const char* key, bool dflt = false) {
  const Json* v = json_member(j, key);
  return v && v->is_boolean() ? v->template get<bool>() : dflt;
}

// The strings of the array `key`; other elements, and anything but an array, are skipped.
template <class Json>
std::vector<std::string> json_strings(const Json& j, const char* key) {
  std::vector<std::string> out;
  const Json* v = json_member(j, key);
  if (!v || !v->is_array()) return out;
  for (const auto& x : *v)
    if (x.is_string()) out.push_back(x.template get<std::string>());
  return out;
}

}  // namespace chaosbench::common
