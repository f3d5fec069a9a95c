#include "harness/agent/fault_wire.h"

#include <stdexcept>

namespace chaosbench::harness {

using json = nlohmann::json;

json encode_params(const faults::Params& params) {
  json out = json::object();
  for (const auto& [name, value] : params.values()) {
    out[name] = std::visit(
        [](const auto& v) -> json {
          using T = std::decay_t<decltype(v)>;
          if constexpr (std::is_same_v<T, faults::Duration>) return {{"duration_ns", v.value.count()}};
          else if constexpr (std::is_same_v<T, faults::Rate>) return {{"rate_bps", v.bits_per_second}};
          else if constexpr (std::is_same_v<T, faults::Size>) return {{"size_bytes", v.bytes}};
          else if constexpr (std::is_same_v<T, faults::Percent>) return {{"percent", v.value}};
          else if constexpr (std::is_same_v<T, std::int64_t>) return {{"integer", v}};
          else if constexpr (std::is_same_v<T, double>) return {{"number", v}};
          else if constexpr (std::is_same_v<T, std::string>) return {{"string", v}};
          else return {{"bool", v}};
        },
        value);
  }
  return out;
}

faults::Params decode_params(const json& j) {
  faults::Params out;
  if (!j.is_object()) throw std::invalid_argument("params: expected an object");
  for (const auto& [name, v] : j.items()) {
    if (!v.is_object() || v.size() != 1) throw std::invalid_argument("params." + name + ": expected one typed value");
    const auto first = v.begin();
    const std::string kind = first.key();
    const json& x = first.value();
    if (kind == "duration_ns") out.set(name, faults::Duration{std::chrono::nanoseconds(x.get<std::int64_t>())});
    else if (kind == "rate_bps") out.set(name, faults::Rate{x.get<std::uint64_t>()});
    else if (kind == "size_bytes") out.set(name, faults::Size{x.get<std::uint64_t>()});
    else if (kind == "percent") out.set(name, faults::Percent{x.get<double>()});
    else if (kind == "integer") out.set(name, x.get<std::int64_t>());
    else if (kind == "number") out.set(name, x.get<double>());
    else if (kind == "string") out.set(name, x.get<std::string>());
    else if (kind == "bool") out.set(name, x.get<bool>());
    else throw std::invalid_argument("params." + name + ": unknown kind " + kind);
  }
  return out;
}

json encode_target(const faults::ResolvedTarget& t) {
  json links = json::array();
  for (const auto& [a, b] : t.links) links.push_back({a, b});
  return {{"nodes", t.nodes}, {"ranks", t.ranks}, {"links", links}, {"groups", t.groups}};
}

faults::ResolvedTarget decode_target(const json& j) {
  faults::ResolvedTarget t;
  t.nodes = j.at("nodes").get<std::vector<int>>();
  t.ranks = j.at("ranks").get<std::vector<int>>();
  for (const auto& l : j.at("links")) t.links.emplace_back(l.at(0).get<int>(), l.at(1).get<int>());
  t.groups = j.at("groups").get<std::vector<std::vector<int>>>();
  return t;
}

}  // namespace chaosbench::harness
