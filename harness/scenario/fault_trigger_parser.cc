// faults: when each fault fires. The trigger (`at`, `at_step` or `after` + `delay`),
// `duration`, `repeat`, random `arrivals`, `probability` and `exclusive`, read here for
// fault_parser.cc; the chains' names and cycles are checked once every fault is read.
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <map>

#include "harness/scenario/scenario_parts.h"
#include "harness/scenario/suggest.h"

namespace chaosbench::harness {
namespace {

// The most occurrences a scenario's faults may plan, all together: each is a record in
// results.json and a line in the dry run, and the schedule scans them on every tick.
constexpr std::int64_t kMaxOccurrences = 10000;

void parse_repeat(ParseContext& ctx, ObjectReader& r, const json& rep, FaultSpec& spec) {
  ObjectReader rr(ctx, rep, r.path_of("repeat"), {"every", "count"});
  rr.require("every", "a duration between applications");
  rr.require("count", "how many times in all, 2 or more");
  auto every = rr.duration("every", /*allow_zero=*/false);
  auto count = rr.integer("count", 2, 1000);
  if (!every || !count) return;
  spec.repeat = RepeatSpec{*every, static_cast<int>(*count)};
  if (!spec.duration)
    ctx.error(r.path_of("repeat"), "a repeated fault needs a \"duration\" shorter than \"every\"");
  else if (spec.duration->value >= every->value)
    ctx.error(r.path_of("repeat"), fmt::format("\"duration\" ({}) must be shorter than \"every\" ({})",
                                               common::to_string(*spec.duration), common::to_string(*every)));
}

// A duration strictly above zero; a negative or zero one is named as such.
std::optional<common::Duration> positive_duration(ObjectReader& r, std::string_view key, std::string_view what) {
  const json* v = r.raw(key);
  if (!v) return std::nullopt;
  if (v->is_string()) {
    auto d = common::parse_duration(v->get_ref<const std::string&>());
    if (d && d->value.count() <= 0) {
      r.ctx().error(r.path_of(key), fmt::format("{} must be above zero, got \"{}\"", what, v->get<std::string>()));
      return std::nullopt;
    }
  } else if (v->is_number() && v->get<double>() <= 0) {
    r.ctx().error(r.path_of(key), fmt::format("{} must be a duration above zero such as \"30s\", got {}", what,
                                              describe(*v)));
    return std::nullopt;
  }
  return r.duration(key, /*allow_zero=*/false);
}

void parse_arrivals(ParseContext& ctx, ObjectReader& r, const json& value, FaultSpec& spec) {
  const std::string path = r.path_of("arrivals");
  if (!value.is_object()) {
    ctx.error(path, fmt::format("expected an object such as {{\"process\": \"poisson\", \"mtbf\": \"30s\"}}, got {}",
                                describe(value)));
    return;
  }
  const json* proc = value.contains("process") ? &value["process"] : nullptr;
  const bool weibull = proc && proc->is_string() && proc->get<std::string>() == "weibull";
  std::vector<std::string_view> keys{"process", "max_occurrences"};
  if (weibull) keys.insert(keys.end(), {"scale", "shape"});
  else keys.push_back("mtbf");
  ObjectReader ar(ctx, value, path, keys);
  ar.require("process", "\"poisson\" or \"weibull\"");
  auto process = ar.choice("process", {"poisson", "weibull"});
  ArrivalSpec a;
  a.process = weibull ? ArrivalSpec::Process::kWeibull : ArrivalSpec::Process::kPoisson;
  std::optional<common::Duration> mean;
  if (weibull) {
    ar.require("scale", "the Weibull scale, a duration above zero");
    ar.require("shape", "the Weibull shape, a number from 0.1 to 10");
    mean = positive_duration(ar, "scale", "the Weibull scale");
    if (auto k = ar.number("shape")) {
      if (*k < 0.1 || *k > 10) ctx.error(ar.path_of("shape"), fmt::format("expected a number from 0.1 to 10, got {}", *k));
      else a.shape = *k;
    }
  } else {
    ar.require("mtbf", "the mean time between failures, a duration above zero");
    mean = positive_duration(ar, "mtbf", "the MTBF");
  }
  if (auto m = ar.integer("max_occurrences", 1, kMaxOccurrences)) a.max_occurrences = static_cast<int>(*m);
  if (!process || !mean || ctx.failed_under(path)) return;
  a.mtbf = *mean;
  spec.arrivals = a;
  if (!spec.duration)
    ctx.error(path, "random arrivals need a \"duration\": each occurrence's window, during which the next waits");
}

void parse_probability(ParseContext& ctx, ObjectReader& r, FaultSpec& spec) {
  auto p = r.number("probability");
  if (!p) return;
  if (!(*p >= 0 && *p <= 1)) {
    ctx.error(r.path_of("probability"), fmt::format("expected a probability from 0 to 1, got {}", *p));
    return;
  }
  spec.probability = *p;
}

// "after": a fault's name, or {"fault": NAME, "delay": DURATION}. The delay lives inside
// the object because network.delay has a "delay" parameter of its own.
void parse_after(ParseContext& ctx, ObjectReader& r, const json& value, FaultSpec& spec) {
  if (value.is_string()) {
    spec.after = value.get<std::string>();
    return;
  }
  if (!value.is_object()) {
    ctx.error(r.path_of("after"), fmt::format("expected a fault's name or {{\"fault\": NAME, \"delay\": \"2s\"}}, got {}",
                                              describe(value)));
    return;
  }
  ObjectReader ar(ctx, value, r.path_of("after"), {"fault", "delay"});
  ar.require("fault", "the name of the fault this one follows");
  spec.after = ar.string("fault");
  spec.delay = ar.duration("delay");
}

}  // namespace

void parse_trigger(ParseContext& ctx, ObjectReader& r, const std::string& path, FaultSpec& spec) {
  const bool has_at = r.has("at"), has_step = r.has("at_step"), has_after = r.has("after");
  const bool has_arrivals = r.has("arrivals");
  const int triggers = int{has_at} + int{has_step} + int{has_after};
  if (has_arrivals && (has_step || has_after))
    ctx.error(r.path_of("arrivals"), "random \"arrivals\" start at \"at\" (default 0s); not with \"at_step\" or \"after\"");
  else if (has_at && has_step)
    ctx.error(path, "has both \"at\" and \"at_step\": give exactly one trigger");
  else if (triggers > 1)
    ctx.error(path, "give exactly one trigger: \"at\" (a duration), \"at_step\" (a step number) or \"after\" (a fault's name)");
  else if (triggers == 0 && !has_arrivals)
    ctx.error(path, "missing a trigger: give \"at\" (a duration), \"at_step\" (a step number), \"after\" (a fault's name) "
                    "or \"arrivals\"");
  spec.at = r.duration("at");
  if (has_arrivals && !spec.at) spec.at = common::Duration{};
  if (auto s = r.integer("at_step", 0, INT64_MAX)) spec.at_step = *s;
  if (const json* after = r.raw("after")) parse_after(ctx, r, *after, spec);
  spec.duration = r.duration("duration", /*allow_zero=*/false);
  parse_probability(ctx, r, spec);
  if (auto x = r.boolean("exclusive")) spec.exclusive = *x;
  if (spec.exclusive && !r.has("duration"))
    ctx.error(r.path_of("exclusive"), "an exclusive fault needs a \"duration\": without one it is in effect until the "
                                      "workload ends, and every other fault would wait for it");
  if (const json* rep = r.raw("repeat")) {
    if (has_step || has_after || has_arrivals)
      ctx.error(r.path_of("repeat"), "\"repeat\" works with \"at\", not with \"at_step\", \"after\" or \"arrivals\"");
    else parse_repeat(ctx, r, *rep, spec);
  }
  if (const json* arr = r.raw("arrivals")) parse_arrivals(ctx, r, *arr, spec);
}

namespace {

// Up to how many occurrences fault i plans: its arrivals' max, its repeat count, 1, or
// (a chain) its parent's; nullopt inside a cycle.
std::optional<std::int64_t> planned_count(const std::vector<FaultSpec>& faults,
                                          const std::map<std::string, std::size_t>& index, std::size_t i) {
  for (std::size_t hops = 0; hops <= faults.size(); ++hops) {
    const auto& f = faults[i];
    if (!f.after) return f.arrivals ? f.arrivals->max_occurrences : f.repeat ? f.repeat->count : 1;
    auto parent = index.find(*f.after);
    if (parent == index.end()) return 1;
    i = parent->second;
  }
  return std::nullopt;
}

}  // namespace

void check_fault_chains(ParseContext& ctx, const std::vector<FaultSpec>& faults) {
  std::map<std::string, std::size_t> index;
  std::vector<std::string> names;
  for (std::size_t i = 0; i < faults.size(); ++i) {
    index.emplace(faults[i].name, i);
    names.push_back(faults[i].name);
  }
  std::vector<std::string_view> candidates(names.begin(), names.end());
  for (std::size_t i = 0; i < faults.size(); ++i) {
    if (!faults[i].after) continue;
    const std::string path = join_path(join_path("faults", i), "after");
    if (!index.count(*faults[i].after)) {
      ctx.error(path, fmt::format("no fault is named \"{}\"{}", *faults[i].after,
                                  suggestion_suffix(*faults[i].after, candidates)));
      continue;
    }
    // Follow the chain from i; coming back to i is a cycle (a longer loop that does
    // not pass through i is reported at its own members).
    std::vector<std::string> chain{faults[i].name};
    std::size_t at = i;
    for (std::size_t hops = 0; hops <= faults.size(); ++hops) {
      auto next = faults[at].after ? index.find(*faults[at].after) : index.end();
      if (next == index.end()) break;
      chain.push_back(next->first);
      if (next->second == i) {
        ctx.error(path, fmt::format("the chain of \"after\" is a cycle: {}", fmt::join(chain, " after ")));
        break;
      }
      at = next->second;
    }
  }
  std::int64_t total = 0;
  for (std::size_t i = 0; i < faults.size(); ++i) {
    total += planned_count(faults, index, i).value_or(0);
    if (total > kMaxOccurrences) {
      ctx.error(join_path("faults", i), fmt::format("the faults up to this one plan up to {} occurrences; at most {} in "
                                                    "all (lower max_occurrences or repeat.count)", total, kMaxOccurrences));
      return;
    }
  }
}

}  // namespace chaosbench::harness
