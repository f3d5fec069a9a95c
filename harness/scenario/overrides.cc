#include "harness/scenario/overrides.h"

#include <algorithm>
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "common/json/json_limits.h"
#include "harness/scenario/diagnostic.h"
#include "harness/scenario/json_locations.h"

namespace chaosbench::harness {
namespace {

// "faults[0].at" and "faults.0.at" both give {"faults", "0", "at"}.
std::vector<std::string> split_key(const std::string& key) {
  std::vector<std::string> parts;
  std::string cur;
  for (char c : key) {
    if (c == '.' || c == '[' || c == ']') {
      if (!cur.empty()) parts.push_back(cur);
      cur.clear();
    } else {
      cur.push_back(c);
    }
  }
  if (!cur.empty()) parts.push_back(cur);
  return parts;
}

bool is_index(const std::string& s) {
  return !s.empty() && s.size() < 9 && std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; });
}

}  // namespace

std::vector<AppliedOverride> apply_overrides(nlohmann::json& doc, const std::vector<std::string>& sets,
                                             const std::string& file) {
  std::vector<AppliedOverride> applied;
  for (const auto& set : sets) {
    std::string origin = "--set " + set;
    auto fail = [&](std::string path, std::string message) {
      throw ScenarioError({Diagnostic{file, 0, 0, origin, std::move(path), std::move(message)}});
    };
    auto eq = set.find('=');
    if (eq == std::string::npos || eq == 0)
      fail("", "expected KEY=VALUE, such as workload.iters=100 or faults.0.at=5s");
    std::string key = set.substr(0, eq);
    std::string text = set.substr(eq + 1);
    auto parts = split_key(key);
    if (parts.empty()) fail("", "the key is empty");
    // Nesting bounded like a scenario's: the value becomes part of one.
    nlohmann::json value = common::parse_json_bounded(text);
    if (value.is_discarded()) value = text;  // "20ms" and other bare words are strings
    nlohmann::json* node = &doc;
    std::string path;
    for (std::size_t i = 0; i < parts.size(); ++i) {
      const auto& part = parts[i];
      bool last = i + 1 == parts.size();
      if (node->is_array()) {
        if (!is_index(part)) fail(path, fmt::format("is an array: \"{}\" is not an index", part));
        std::size_t idx = std::stoul(part);
        if (idx >= node->size())
          fail(path, fmt::format("has {} elements: index {} is out of range", node->size(), idx));
        path = join_path(path, idx);
        node = &(*node)[idx];
      } else if (node->is_object() || node->is_null()) {
        path = join_path(path, part);
        if (node->is_null()) *node = nlohmann::json::object();
        if (!last && !node->contains(part)) (*node)[part] = nlohmann::json::object();
        node = &(*node)[part];
      } else {
        fail(path, fmt::format("is a {}, so it has no \"{}\"", node->type_name(), part));
      }
      if (last) *node = value;
    }
    applied.push_back({path, origin});
  }
  return applied;
}

}  // namespace chaosbench::harness
