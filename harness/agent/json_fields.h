// Reading a peer's JSON without trusting it: each getter returns the field when it is
// there with the right type, else the default, and never throws. What crosses the agent
// link is read through these (a malformed frame must not end a run or a thread).
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>

namespace chaosbench::harness {

inline std::string json_text(const nlohmann::json& j, const char* key, std::string dflt = "") {
  if (!j.is_object()) return dflt;
  auto it = j.find(key);
  return it != j.end() && it->is_string() ? it->get<std::string>() : dflt;
}

inline double json_number(const nlohmann::json& j, const char* key, double dflt = 0) {
  if (!j.is_object()) return dflt;
  auto it = j.find(key);
  return it != j.end() && it->is_number() ? it->get<double>() : dflt;
}

inline std::int64_t json_integer(const nlohmann::json& j, const char* key, std::int64_t dflt = -1) {
  if (!j.is_object()) return dflt;
  auto it = j.find(key);
  return it != j.end() && it->is_number_integer() ? it->get<std::int64_t>() : dflt;
}

inline bool json_flag(const nlohmann::json& j, const char* key, bool dflt = false) {
  if (!j.is_object()) return dflt;
  auto it = j.find(key);
  return it != j.end() && it->is_boolean() ? it->get<bool>() : dflt;
}

}  // namespace chaosbench::harness
