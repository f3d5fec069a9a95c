// faults: the generic envelope (name, type, target, the trigger keys of
// fault_trigger_parser.cc, and restart_after for the types whose registry row takes it)
// parsed once here; each type's own parameters come from its declarations in the registry.
#include <algorithm>
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <set>

#include "faults/registry/registry.h"
#include "harness/scenario/scenario_parts.h"
#include "harness/scenario/suggest.h"

namespace chaosbench::harness {
namespace {

using faults::ParamKind;
using faults::TargetForm;

const std::vector<std::string_view> kEnvelope{"type",   "name",     "target",      "at",    "at_step",
                                              "duration", "repeat", "arrivals", "probability", "after", "exclusive"};

std::vector<std::string_view> type_names() {
  std::vector<std::string_view> out;
  for (const auto& t : faults::fault_registry()) out.push_back(t.type);
  return out;
}

// {"percent": "50%"}: a percentage above 0 of the nodes.
bool read_percent(ParseContext& ctx, const json& val, const std::string& kp, TargetSpec& t) {
  if (!val.is_string()) {
    ctx.error(kp, fmt::format("expected a percentage such as \"50%\", got {}", describe(val)));
    return false;
  }
  auto p = common::parse_percent(val.get_ref<const std::string&>());
  if (!p || p->value <= 0) {
    ctx.error(kp, p ? std::string("expected a percentage above 0%") : p.error);
    return false;
  }
  t.percent = *p;
  return true;
}

// {"links": [[a, b], ...]}: pairs of two different nodes.
bool read_links(ParseContext& ctx, const json& val, const std::string& kp, const ClusterSpec& cluster, TargetSpec& t) {
  if (!val.is_array() || val.empty()) {
    ctx.error(kp, fmt::format("expected a non-empty array of node pairs such as [[0,1]], got {}", describe(val)));
    return false;
  }
  for (std::size_t i = 0; i < val.size(); ++i) {
    auto pair = read_index_list(ctx, val[i], join_path(kp, i), cluster.nodes, "node");
    if (!pair) return false;
    if (pair->size() != 2) {
      ctx.error(join_path(kp, i), "expected a pair of two different nodes");
      return false;
    }
    t.links.emplace_back((*pair)[0], (*pair)[1]);
  }
  return true;
}

// {"groups": [[...], [...]]}: at least two groups, no node in two.
bool read_groups(ParseContext& ctx, const json& val, const std::string& kp, const ClusterSpec& cluster, TargetSpec& t) {
  if (!val.is_array() || val.size() < 2) {
    ctx.error(kp, fmt::format("expected at least two groups of nodes such as [[0,1],[2,3]], got {}", describe(val)));
    return false;
  }
  std::set<int> seen;
  for (std::size_t i = 0; i < val.size(); ++i) {
    auto g = read_index_list(ctx, val[i], join_path(kp, i), cluster.nodes, "node");
    if (!g) return false;
    for (int n : *g) {
      if (!seen.insert(n).second) {
        ctx.error(join_path(kp, i), fmt::format("node {} is in two groups", n));
        return false;
      }
    }
    t.groups.push_back(*g);
  }
  return true;
}

std::optional<TargetSpec> parse_target(ParseContext& ctx, const json& v, const std::string& path,
                                       const ClusterSpec& cluster, const WorkloadSpec* workload,
                                       const faults::FaultTypeInfo& info) {
  static const std::vector<std::pair<std::string_view, TargetForm>> kForms{
      {"all", TargetForm::kAll},         {"nodes", TargetForm::kNodes},     {"ranks", TargetForm::kRanks},
      {"random", TargetForm::kRandom},   {"percent", TargetForm::kPercent}, {"links", TargetForm::kLinks},
      {"groups", TargetForm::kGroups}};
  const std::uint32_t accepted = info.target_forms;
  // The parallel groups' forms resolve into ranks or nodes (parallel_parser.cc).
  const auto& group_forms = group_target_forms();
  const bool groups_ok = faults::accepts(accepted, TargetForm::kRanks) || faults::accepts(accepted, TargetForm::kNodes);
  std::vector<std::string_view> names, ok;
  for (const auto& [n, f] : kForms) {
    names.push_back(n);
    if (faults::accepts(accepted, f)) ok.push_back(n);
  }
  names.insert(names.end(), group_forms.begin(), group_forms.end());
  if (groups_ok) ok.insert(ok.end(), group_forms.begin(), group_forms.end());
  if (!v.is_object() || v.size() != 1) {
    ctx.error(path, fmt::format("expected an object with exactly one of \"{}\", got {}", fmt::join(names, "\", \""),
                                v.is_object() ? fmt::format("{} keys", v.size()) : describe(v)));
    return std::nullopt;
  }
  const auto& key = v.begin().key();
  const json& val = v.begin().value();
  std::string kp = join_path(path, key);
  if (std::find(group_forms.begin(), group_forms.end(), key) != group_forms.end())
    return parse_group_target(ctx, key, val, kp, {cluster, workload, accepted, ok, info.type});
  auto form = std::find_if(kForms.begin(), kForms.end(), [&](const auto& p) { return p.first == key; });
  if (form == kForms.end()) {
    ctx.error(kp, "unknown target form" + suggestion_suffix(key, names), true);
    return std::nullopt;
  }
  if (!faults::accepts(accepted, form->second)) {
    ctx.error(kp, fmt::format("this fault type does not accept \"{}\" targets (it accepts: {})", key, fmt::join(ok, ", ")),
              true);
    return std::nullopt;
  }
  TargetSpec t;
  t.form = form->second;
  switch (t.form) {
    case TargetForm::kAll:
      if (!val.is_boolean() || !val.get<bool>()) {
        ctx.error(kp, fmt::format("expected true, got {}", describe(val)));
        return std::nullopt;
      }
      break;
    case TargetForm::kNodes:
    case TargetForm::kRanks: {
      int limit = t.form == TargetForm::kNodes ? cluster.nodes : cluster.world_size();
      auto idx = read_index_list(ctx, val, kp, limit, t.form == TargetForm::kNodes ? "node" : "rank");
      if (!idx) return std::nullopt;
      t.indices = *idx;
      break;
    }
    case TargetForm::kRandom: {
      auto n = read_integer(ctx, val, kp, 1, cluster.nodes);
      if (!n) return std::nullopt;
      t.count = static_cast<int>(*n);
      break;
    }
    case TargetForm::kPercent:
      if (!read_percent(ctx, val, kp, t)) return std::nullopt;
      break;
    case TargetForm::kLinks:
      if (!read_links(ctx, val, kp, cluster, t)) return std::nullopt;
      break;
    case TargetForm::kGroups:
      if (!read_groups(ctx, val, kp, cluster, t)) return std::nullopt;
      break;
  }
  return t;
}

void parse_params(ObjectReader& r, const faults::FaultTypeInfo& info, faults::Params& out) {
  for (const auto& p : info.params) {
    if (!r.has(p.name)) {
      if (p.required) r.require(p.name, fmt::format("a {}: {}", to_string(p.kind), p.description));
      else if (auto d = faults::default_value(p)) out.set(std::string(p.name), std::move(*d));
      continue;
    }
    std::optional<faults::ParamValue> v;
    switch (p.kind) {
      case ParamKind::kDuration: if (auto x = r.duration(p.name)) v = *x; break;
      case ParamKind::kRate: if (auto x = r.rate(p.name)) v = *x; break;
      case ParamKind::kSize: if (auto x = r.size(p.name)) v = *x; break;
      case ParamKind::kPercent: if (auto x = r.percent(p.name)) v = *x; break;
      case ParamKind::kInteger:
        if (auto x = r.integer(p.name, static_cast<std::int64_t>(p.min), static_cast<std::int64_t>(p.max))) v = *x;
        break;
      case ParamKind::kNumber:
        if (auto x = r.number(p.name)) {
          if (*x < p.min || *x > p.max)
            r.ctx().error(r.path_of(p.name), fmt::format("expected a number from {} to {}, got {}", p.min, p.max, *x));
          else v = *x;
        }
        break;
      case ParamKind::kString: if (auto x = r.string(p.name)) v = *x; break;
      case ParamKind::kBool: if (auto x = r.boolean(p.name)) v = *x; break;
    }
    if (v) out.set(std::string(p.name), std::move(*v));
  }
}

// The registry row of `f`'s "type", or null after saying what is wrong with it.
const faults::FaultTypeInfo* fault_type_of(ParseContext& ctx, const json& f, const std::string& path) {
  auto type_it = f.find("type");
  if (type_it == f.end()) {
    ctx.error(path, fmt::format("missing required key \"type\" (one of: {})", fmt::join(type_names(), ", ")));
    return nullptr;
  }
  if (!type_it->is_string()) {
    ctx.error(join_path(path, "type"), fmt::format("expected a string, got {}", describe(*type_it)));
    return nullptr;
  }
  const auto& t = type_it->get_ref<const std::string&>();
  const faults::FaultTypeInfo* info = faults::find_fault_type(t);
  if (!info)
    ctx.error(join_path(path, "type"), fmt::format("unknown fault type \"{}\"{} (known: {})", t,
                                                   suggestion_suffix(t, type_names()), fmt::join(type_names(), ", ")));
  return info;
}

}  // namespace

std::vector<FaultSpec> parse_faults(ParseContext& ctx, const json& value, const ClusterSpec& cluster,
                                    const WorkloadSpec* workload) {
  std::vector<FaultSpec> out;
  if (!value.is_array()) {
    ctx.error("faults", fmt::format("expected an array of faults, got {}", describe(value)));
    return out;
  }
  std::set<std::string> names;
  for (std::size_t i = 0; i < value.size(); ++i) {
    const json& f = value[i];
    std::string path = join_path("faults", i);
    if (!f.is_object()) {
      ctx.error(path, fmt::format("expected a fault object, got {}", describe(f)));
      continue;
    }
    const faults::FaultTypeInfo* info = fault_type_of(ctx, f, path);
    std::vector<std::string_view> allowed = kEnvelope;
    if (info)
      for (const auto& p : faults::declared_params(*info)) allowed.push_back(p.name);
    else  // without a known type, only report what is surely wrong
      for (const auto& [k, _] : f.items()) allowed.push_back(k);
    ObjectReader r(ctx, f, path, allowed);
    FaultSpec spec;
    if (info) spec.type = std::string(info->type);
    if (auto n = r.string("name")) {
      if (!valid_name(*n))
        ctx.error(r.path_of("name"), fmt::format("expected 1 to 64 of a-z 0-9 . _ -, starting with a letter or digit; got \"{}\"", *n));
      spec.name = *n;
    } else {
      spec.name = fmt::format("{}-{}", spec.type.empty() ? "fault" : spec.type, i);
    }
    if (!names.insert(spec.name).second)
      ctx.error(r.has("name") ? r.path_of("name") : path, fmt::format("two faults are named \"{}\"", spec.name));
    if (info) {
      if (const json* t = r.raw("target")) {
        if (auto ts = parse_target(ctx, *t, r.path_of("target"), cluster, workload, *info)) spec.target = *ts;
      }
      if (auto why = parallel_fault_refusal(info->type, workload); !why.empty()) ctx.error(r.path_of("type"), why);
      parse_params(r, *info, spec.params);
      if (!info->restart_after.empty()) spec.restart_after = r.duration("restart_after");
      bool params_complete = true;
      for (const auto& p : info->params) params_complete = params_complete && (!p.required || spec.params.has(p.name));
      if (info->check && params_complete) {
        if (auto why = info->check(spec.params); !why.empty()) ctx.error(path, why);
      }
    }
    parse_trigger(ctx, r, path, spec);
    out.push_back(std::move(spec));
  }
  check_fault_chains(ctx, out);
  return out;
}

}  // namespace chaosbench::harness
