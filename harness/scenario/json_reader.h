// Typed reading of a JSON document with precise errors: each read names the JSON path,
// the file's line:column (or the --set that produced the value) and what was expected.
// Errors are collected, not thrown, so `validate` reports all of them in one go.
// Internal to the scenario parser (and `validate --accepted-keys`, which observes it).
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/values/units.h"
#include "harness/scenario/diagnostic.h"
#include "harness/scenario/json_locations.h"
#include "harness/scenario/overrides.h"

namespace chaosbench::harness {

using nlohmann::json;

// Told of every JSON object the scenario parser reads and of the keys it accepts there:
// what `chaosbench validate --accepted-keys` prints, so that tests/e2e/schema_walk.py can hold
// scenarios/schema.json to the parser.
class KeyObserver {
 public:
  virtual ~KeyObserver() = default;
  // `file` is the ParseContext's file (an inventory of hosts is a file of its own); `path`
  // the object's JSON path as diagnostics print it ("" for the document,
  // "faults[0].arrivals"); `keys` every key accepted there. A later call for the same file
  // and path replaces the keys (a caller narrowing them, a sweep's points read again).
  virtual void object_read(const std::string& file, const std::string& path,
                           const std::vector<std::string_view>& keys) = 0;
};

// While one lives, each ParseContext constructed on this thread reports to `observer`.
// Scopes nest: the previous observer (none by default) is back when this one ends.
class ScopedKeyObserver {
 public:
  explicit ScopedKeyObserver(KeyObserver& observer);
  ~ScopedKeyObserver();
  ScopedKeyObserver(const ScopedKeyObserver&) = delete;
  ScopedKeyObserver& operator=(const ScopedKeyObserver&) = delete;

 private:
  KeyObserver* previous_;
};

class ParseContext {
 public:
  // Reports read objects to the ScopedKeyObserver of this thread, if there is one.
  ParseContext(std::string file, std::string_view text, std::vector<AppliedOverride> overrides);

  // Records an error at the value of `path` (or its key, when at_key).
  void error(const std::string& path, std::string message, bool at_key = false);
  void warning(const std::string& path, std::string message);
  bool failed() const;
  // True when an error was reported at `path` or inside it (so derived checks can stay
  // quiet instead of piling a second message on the first).
  bool failed_under(std::string_view path) const;
  // The diagnostics in file order (values from --set last), handing them over.
  std::vector<Diagnostic> take();
  // Tells the key observer, if any, that the object at `path` accepts `keys`.
  void report_keys(const std::string& path, const std::vector<std::string_view>& keys) const;

 private:
  Diagnostic locate(const std::string& path, bool at_key) const;

  KeyObserver* key_observer_;
  std::string file_;
  std::string_view text_;
  JsonLocations locations_;
  std::vector<AppliedOverride> overrides_;
  std::vector<Diagnostic> diagnostics_;
};

// Describes a JSON value for messages: "a string (\"abc\")", "an array", "null".
std::string describe(const json& v);

// One JSON object being read. The constructor reports every key not in `allowed` (with a
// suggestion), and tells the key observer (ParseContext::report_keys) that the object
// accepts `allowed`; the typed getters report wrong types and ranges and return nullopt then.
class ObjectReader {
 public:
  // `path` names the object in messages ("workload", "faults[0]").
  ObjectReader(ParseContext& ctx, const json& value, std::string path, std::vector<std::string_view> allowed);

  bool ok() const { return ok_; }  // false when the value is not an object at all
  // For a caller that refuses some of `allowed` by a rule of its own (a probe's kind):
  // tells the key observer that this object accepts only `keys`, a subset of `allowed`.
  void narrow_reported_keys(const std::vector<std::string_view>& keys) const;
  bool has(std::string_view key) const;
  const json* raw(std::string_view key) const;
  std::string path_of(std::string_view key) const { return join_path(path_, key); }
  const std::string& path() const { return path_; }
  ParseContext& ctx() { return ctx_; }

  // Reports "missing required key" at the object itself.
  void require(std::string_view key, std::string_view expected);

  std::optional<std::string> string(std::string_view key);
  std::optional<std::int64_t> integer(std::string_view key, std::int64_t min, std::int64_t max);
  std::optional<double> number(std::string_view key);
  std::optional<bool> boolean(std::string_view key);
  std::optional<common::Duration> duration(std::string_view key, bool allow_zero = true);
  std::optional<common::Rate> rate(std::string_view key);
  std::optional<common::Size> size(std::string_view key);
  std::optional<common::Percent> percent(std::string_view key);
  // A string that must be one of `choices`.
  std::optional<std::string> choice(std::string_view key, const std::vector<std::string_view>& choices);
  // A non-empty array of distinct strings, each one of `choices`.
  std::optional<std::vector<std::string>> choice_list(std::string_view key,
                                                      const std::vector<std::string_view>& choices);

 private:
  ParseContext& ctx_;
  const json& value_;
  std::string path_;
  bool ok_ = false;
};

// Reads a whole-number JSON value in [min, max]; reports at `path` otherwise.
std::optional<std::int64_t> read_integer(ParseContext& ctx, const json& v, const std::string& path,
                                         std::int64_t min, std::int64_t max);

}  // namespace chaosbench::harness
