#include "harness/scenario/json_reader.h"

#include <cmath>
#include <algorithm>
#include <fmt/format.h>
#include <fmt/ranges.h>

#include "harness/scenario/suggest.h"

namespace chaosbench::harness {
namespace {

// The observer of ScopedKeyObserver's innermost scope on this thread; null outside any.
thread_local KeyObserver* scoped_key_observer = nullptr;

}  // namespace

ScopedKeyObserver::ScopedKeyObserver(KeyObserver& observer) : previous_(scoped_key_observer) {
  scoped_key_observer = &observer;
}

ScopedKeyObserver::~ScopedKeyObserver() { scoped_key_observer = previous_; }

ParseContext::ParseContext(std::string file, std::string_view text, std::vector<AppliedOverride> overrides)
    : key_observer_(scoped_key_observer),
      file_(std::move(file)),
      text_(text),
      locations_(JsonLocations::scan(text)),
      overrides_(std::move(overrides)) {
  for (const auto& [path, offset] : locations_.duplicate_keys()) {
    Diagnostic d;
    d.file = file_;
    d.path = path;
    auto pos = position_of(text_, offset);
    d.line = pos.line;
    d.column = pos.column;
    d.message = "duplicate key: it is already set above in the same object (only the last would count)";
    diagnostics_.push_back(std::move(d));
  }
}

Diagnostic ParseContext::locate(const std::string& path, bool at_key) const {
  Diagnostic d;
  d.file = file_;
  d.path = path;
  // A value that an override set (or that lies inside one) has no place in the file.
  auto under = [](const std::string& inner, const std::string& outer) {
    return inner.size() > outer.size() && inner.starts_with(outer) &&
           (inner[outer.size()] == '.' || inner[outer.size()] == '[');
  };
  const bool in_file = at_key ? locations_.key_offset(path).has_value() : locations_.value_offset(path).has_value();
  for (auto it = overrides_.rbegin(); it != overrides_.rend(); ++it) {
    const auto& o = it->path;
    // At or inside the overridden value; or an object the override created on its way
    // (--set a.b.c=1 makes "a", which the file never had).
    if (path == o || under(path, o) || (!in_file && under(o, path))) {
      d.origin = it->origin;
      return d;
    }
  }
  // Otherwise the nearest ancestor the file has (a missing key is reported at its object).
  std::string p = path;
  std::optional<std::size_t> offset;
  if (at_key) offset = locations_.key_offset(p);
  while (!offset) {
    offset = locations_.value_offset(p);
    if (offset || p.empty()) break;
    auto cut = p.find_last_of(".[");
    p = cut == std::string::npos ? std::string() : p.substr(0, cut);
  }
  if (offset) {
    auto pos = position_of(text_, *offset);
    d.line = pos.line;
    d.column = pos.column;
  }
  return d;
}

void ParseContext::error(const std::string& path, std::string message, bool at_key) {
  Diagnostic d = locate(path, at_key);
  d.message = std::move(message);
  diagnostics_.push_back(std::move(d));
}

void ParseContext::warning(const std::string& path, std::string message) {
  Diagnostic d = locate(path, false);
  d.message = std::move(message);
  d.warning = true;
  diagnostics_.push_back(std::move(d));
}

std::vector<Diagnostic> ParseContext::take() {
  std::stable_sort(diagnostics_.begin(), diagnostics_.end(), [](const Diagnostic& a, const Diagnostic& b) {
    auto key = [](const Diagnostic& d) { return std::pair(d.line == 0 ? INT32_MAX : d.line, d.column); };
    return key(a) < key(b);
  });
  return std::move(diagnostics_);
}

void ParseContext::report_keys(const std::string& path, const std::vector<std::string_view>& keys) const {
  if (key_observer_) key_observer_->object_read(file_, path, keys);
}

bool ParseContext::failed() const {
  for (const auto& d : diagnostics_)
    if (!d.warning) return true;
  return false;
}

bool ParseContext::failed_under(std::string_view path) const {
  for (const auto& d : diagnostics_) {
    if (d.warning) continue;
    if (d.path == path || (d.path.starts_with(path) && d.path.size() > path.size() &&
                           (d.path[path.size()] == '.' || d.path[path.size()] == '[')))
      return true;
  }
  return false;
}

std::string describe(const json& v) {
  switch (v.type()) {
    case json::value_t::null: return "null";
    case json::value_t::boolean: return fmt::format("a boolean ({})", v.get<bool>());
    case json::value_t::string: {
      const auto& s = v.get_ref<const std::string&>();
      return fmt::format("a string (\"{}\")", s.size() > 40 ? s.substr(0, 40) + "..." : s);
    }
    case json::value_t::number_integer:
    case json::value_t::number_unsigned:
    case json::value_t::number_float: return fmt::format("a number ({})", v.dump());
    case json::value_t::array: return "an array";
    case json::value_t::object: return "an object";
    default: return "an unsupported value";
  }
}

std::optional<std::int64_t> read_integer(ParseContext& ctx, const json& v, const std::string& path,
                                         std::int64_t min, std::int64_t max) {
  std::optional<std::int64_t> out;
  if (v.is_number_integer()) {
    out = v.get<std::int64_t>();
  } else if (v.is_number_unsigned()) {
    auto u = v.get<std::uint64_t>();
    if (u <= static_cast<std::uint64_t>(INT64_MAX)) out = static_cast<std::int64_t>(u);
  } else if (v.is_number_float()) {
    double d = v.get<double>();
    if (std::isfinite(d) && d == std::floor(d) && std::fabs(d) < 9e15) out = static_cast<std::int64_t>(d);
  }
  if (!out) {
    ctx.error(path, fmt::format("expected an integer from {} to {}, got {}", min, max, describe(v)));
    return std::nullopt;
  }
  if (*out < min || *out > max) {
    ctx.error(path, fmt::format("expected an integer from {} to {}, got {}", min, max, *out));
    return std::nullopt;
  }
  return out;
}

ObjectReader::ObjectReader(ParseContext& ctx, const json& value, std::string path,
                           std::vector<std::string_view> allowed)
    : ctx_(ctx), value_(value), path_(std::move(path)) {
  if (!value_.is_object()) {
    ctx_.error(path_, fmt::format("expected an object, got {}", describe(value_)));
    return;
  }
  ok_ = true;
  ctx_.report_keys(path_, allowed);
  for (const auto& [key, _] : value_.items()) {
    if (std::find(allowed.begin(), allowed.end(), key) == allowed.end()) {
      ctx_.error(path_of(key), "unknown key" + suggestion_suffix(key, allowed), /*at_key=*/true);
    }
  }
}

void ObjectReader::narrow_reported_keys(const std::vector<std::string_view>& keys) const {
  if (ok_) ctx_.report_keys(path_, keys);
}

bool ObjectReader::has(std::string_view key) const {
  return ok_ && value_.contains(std::string(key));
}

const json* ObjectReader::raw(std::string_view key) const {
  if (!ok_) return nullptr;
  auto it = value_.find(std::string(key));
  return it == value_.end() ? nullptr : &*it;
}

void ObjectReader::require(std::string_view key, std::string_view expected) {
  if (ok_ && !has(key)) ctx_.error(path_, fmt::format("missing required key \"{}\" ({})", key, expected));
}

std::optional<std::string> ObjectReader::string(std::string_view key) {
  const json* v = raw(key);
  if (!v) return std::nullopt;
  if (!v->is_string()) {
    ctx_.error(path_of(key), fmt::format("expected a string, got {}", describe(*v)));
    return std::nullopt;
  }
  return v->get<std::string>();
}

std::optional<std::int64_t> ObjectReader::integer(std::string_view key, std::int64_t min, std::int64_t max) {
  const json* v = raw(key);
  if (!v) return std::nullopt;
  return read_integer(ctx_, *v, path_of(key), min, max);
}

std::optional<double> ObjectReader::number(std::string_view key) {
  const json* v = raw(key);
  if (!v) return std::nullopt;
  if (!v->is_number()) {
    ctx_.error(path_of(key), fmt::format("expected a number, got {}", describe(*v)));
    return std::nullopt;
  }
  return v->get<double>();
}

std::optional<bool> ObjectReader::boolean(std::string_view key) {
  const json* v = raw(key);
  if (!v) return std::nullopt;
  if (!v->is_boolean()) {
    ctx_.error(path_of(key), fmt::format("expected true or false, got {}", describe(*v)));
    return std::nullopt;
  }
  return v->get<bool>();
}

namespace {

template <class T>
std::optional<T> read_quantity(ObjectReader& r, std::string_view key, common::Parsed<T> (*parse)(std::string_view),
                               std::string_view kind) {
  const json* v = r.raw(key);
  if (!v) return std::nullopt;
  if (!v->is_string()) {
    r.ctx().error(r.path_of(key), fmt::format("expected {} as a string with a unit, got {}", kind, describe(*v)));
    return std::nullopt;
  }
  auto parsed = parse(v->get_ref<const std::string&>());
  if (!parsed) {
    r.ctx().error(r.path_of(key), parsed.error);
    return std::nullopt;
  }
  return *parsed;
}

}  // namespace

std::optional<common::Duration> ObjectReader::duration(std::string_view key, bool allow_zero) {
  auto d = read_quantity<common::Duration>(*this, key, common::parse_duration, "a duration (\"1.5s\")");
  if (d && !allow_zero && d->value.count() == 0) {
    ctx_.error(path_of(key), "expected a duration greater than zero");
    return std::nullopt;
  }
  return d;
}

std::optional<common::Rate> ObjectReader::rate(std::string_view key) {
  return read_quantity<common::Rate>(*this, key, common::parse_rate, "a rate (\"100mbit\")");
}

std::optional<common::Size> ObjectReader::size(std::string_view key) {
  return read_quantity<common::Size>(*this, key, common::parse_size, "a size (\"64KiB\")");
}

std::optional<common::Percent> ObjectReader::percent(std::string_view key) {
  return read_quantity<common::Percent>(*this, key, common::parse_percent, "a percentage (\"0.5%\")");
}

std::optional<std::string> ObjectReader::choice(std::string_view key, const std::vector<std::string_view>& choices) {
  auto s = string(key);
  if (!s) return std::nullopt;
  if (std::find(choices.begin(), choices.end(), *s) == choices.end()) {
    ctx_.error(path_of(key), fmt::format("expected one of \"{}\", got \"{}\"{}", fmt::join(choices, "\", \""), *s,
                                         suggestion_suffix(*s, choices)));
    return std::nullopt;
  }
  return s;
}

std::optional<std::vector<std::string>> ObjectReader::choice_list(std::string_view key,
                                                                  const std::vector<std::string_view>& choices) {
  const json* v = raw(key);
  if (!v) return std::nullopt;
  std::string path = path_of(key);
  if (!v->is_array() || v->empty()) {
    ctx_.error(path, fmt::format("expected a non-empty array of \"{}\", got {}", fmt::join(choices, "\", \""),
                                 v->is_array() ? "an empty array" : describe(*v)));
    return std::nullopt;
  }
  std::vector<std::string> out;
  bool good = true;
  for (std::size_t i = 0; i < v->size(); ++i) {
    const json& e = (*v)[i];
    std::string ep = join_path(path, i);
    if (!e.is_string()) {
      ctx_.error(ep, fmt::format("expected a string, got {}", describe(e)));
      good = false;
      continue;
    }
    const auto& s = e.get_ref<const std::string&>();
    if (std::find(choices.begin(), choices.end(), s) == choices.end()) {
      ctx_.error(ep, fmt::format("expected one of \"{}\", got \"{}\"{}", fmt::join(choices, "\", \""), s,
                                 suggestion_suffix(s, choices)));
      good = false;
    } else if (std::find(out.begin(), out.end(), s) != out.end()) {
      ctx_.error(ep, fmt::format("\"{}\" is listed twice", s));
      good = false;
    } else {
      out.push_back(s);
    }
  }
  if (!good) return std::nullopt;
  return out;
}

}  // namespace chaosbench::harness
