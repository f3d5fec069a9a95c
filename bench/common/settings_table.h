// A workload's settings as one table: a row per setting (its flag, the member it is, its
// help; its default is the member's in a default-made settings value) from which the table
// makes the three things each setting needs, so none is written twice: the flags the
// launcher writes (encode), the flags a worker declares with their defaults and help
// (declare: what `chaosbench worker <kind> --help` prints), and the settings read back
// from a parsed command line (read). A row says how its value is spelt on the command
// line by its type (numbers, booleans as 0 or 1, strings, comma-separated lists, sizes
// with units) or by a codec it is given (milliseconds, microseconds, a duration's text, a
// name among choices), and may be written only when a condition holds. A std::optional
// member is written only when set and read only when given. `check` rows validate the
// settings read, as a whole.
//
// Threads: a table is built once (a function-local static) and then only read.
#pragma once

#include <functional>
#include <optional>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include <boost/program_options/options_description.hpp>
#include <boost/program_options/value_semantic.hpp>
#include <boost/program_options/variables_map.hpp>

#include "bench/common/flag_codec.h"
#include "bench/common/flag_values.h"

namespace chaosbench::bench {

template <class S>
class SettingsTable {
 public:
  using Flags = std::vector<std::string>;

  // What a row does, for a setting the builders below cannot say (a group of flags for one
  // optional part): its own three functions, kept beside the others in the table.
  struct Row {
    std::function<void(const S&, Flags&)> encode;
    std::function<void(boost::program_options::options_description&, const S& defaults)> declare;
    std::function<void(const boost::program_options::variables_map&, S&)> read;
  };
  SettingsTable& add_row(Row row) {
    rows_.push_back(std::move(row));
    return *this;
  }

  // A setting spelt by its type (flag_codec.h). `at` is a member pointer, or a function
  // S& -> T& for a nested member.
  template <class At>
  SettingsTable& add(const char* flag, At at, const char* help) {
    using T = std::remove_cvref_t<decltype(member(at, std::declval<S&>()))>;
    return add(flag, at, help, FlagCodec<T>{});
  }

  // A setting spelt by `codec`: Po (the type Boost reads), encode(T) -> string,
  // declared(T) -> Po (the default shown), decode(Po, flag) -> T (throws invalid_argument).
  template <class At, class Codec>
  SettingsTable& add(const char* flag, At at, const char* help, Codec codec) {
    using T = std::remove_cvref_t<decltype(member(at, std::declval<S&>()))>;
    rows_.push_back(make_row<T>(flag, at, help, codec));
    return *this;
  }

  // An optional setting whose worker keeps `shown` as its own default when it is not given:
  // declared (and shown) with it, read only when given, written only when set.
  template <class At, class T>
  SettingsTable& add_optional(const char* flag, At at, const char* help, T shown) {
    using O = std::remove_cvref_t<decltype(member(at, std::declval<S&>()))>;
    static_assert(is_optional<O>::value, "add_optional takes a std::optional member");
    Row r = make_row<O>(flag, at, help, FlagCodec<O>{});
    r.declare = [name = std::string(flag), help, shown](boost::program_options::options_description& o, const S&) {
      o.add_options()(name.c_str(), boost::program_options::value<typename FlagCodec<O>::Po>()->default_value(shown), help);
    };
    rows_.push_back(std::move(r));
    return *this;
  }

  // A string setting that is empty unless given: written only when not empty, declared
  // without a default.
  template <class At>
  SettingsTable& add_unless_empty(const char* flag, At at, const char* help) {
    namespace po = boost::program_options;
    Row r;
    const std::string name = flag;
    r.encode = [name, at](const S& s, Flags& out) {
      if (const std::string& v = member(at, s); !v.empty()) out.insert(out.end(), {"--" + name, v});
    };
    r.declare = [name, help](po::options_description& o, const S&) { o.add_options()(name.c_str(), po::value<std::string>(), help); };
    r.read = [name, at](const po::variables_map& vm, S& s) {
      if (vm.count(name)) member(at, s) = vm[name].as<std::string>();
    };
    rows_.push_back(std::move(r));
    return *this;
  }

  // The rows added from here on are written only when `pred` holds for the settings.
  SettingsTable& when(std::function<bool(const S&)> pred) {
    when_ = std::move(pred);
    return *this;
  }
  SettingsTable& always() {
    when_ = nullptr;
    return *this;
  }

  // Validates the settings read, after every row: `why` returns "" or the message the
  // worker shows as a usage error.
  SettingsTable& check(std::function<std::string(const S&)> why) {
    checks_.push_back(std::move(why));
    return *this;
  }

  Flags encode(const S& s) const {
    Flags out;
    for (const auto& r : rows_) r.encode(s, out);
    return out;
  }

  void declare(boost::program_options::options_description& options) const {
    const S defaults{};
    for (const auto& r : rows_) r.declare(options, defaults);
  }

  S read(const boost::program_options::variables_map& vm) const {
    S s{};
    for (const auto& r : rows_) r.read(vm, s);
    for (const auto& c : checks_)
      if (std::string why = c(s); !why.empty()) throw std::invalid_argument(why);
    return s;
  }

 private:

  template <class M>
  static auto& member(M S::*at, S& s) {
    return s.*at;
  }
  template <class F>
    requires std::is_invocable_v<F, S&>
  static auto& member(F f, S& s) {
    return f(s);
  }
  template <class At>
  static const auto& member(At at, const S& s) {
    return member(at, const_cast<S&>(s));
  }

  template <class T, class At, class Codec>
  Row make_row(const char* flag, At at, const char* help, Codec codec) {
    namespace po = boost::program_options;
    using Po = typename Codec::Po;
    Row r;
    const std::string name = flag;
    auto when = when_;
    if constexpr (is_optional<T>::value) {
      r.encode = [name, at, codec, when](const S& s, Flags& out) {
        const auto& v = member(at, s);
        if (v && (!when || when(s))) out.insert(out.end(), {"--" + name, codec.encode(*v)});
      };
      // Declared with the default the worker keeps for itself (a default-made optional
      // shows none); read only when given on the command line.
      r.declare = [name, at, codec, help](po::options_description& o, const S& d) {
        const auto& v = member(at, d);
        if (v) o.add_options()(name.c_str(), po::value<Po>()->default_value(codec.declared(*v)), help);
        else o.add_options()(name.c_str(), po::value<Po>(), help);
      };
      r.read = [name, at, codec](const po::variables_map& vm, S& s) {
        if (vm.count(name) && !vm[name].defaulted()) member(at, s) = codec.decode(vm[name].as<Po>(), name.c_str());
      };
    } else {
      r.encode = [name, at, codec, when](const S& s, Flags& out) {
        if (!when || when(s)) out.insert(out.end(), {"--" + name, codec.encode(member(at, s))});
      };
      r.declare = [name, at, codec, help](po::options_description& o, const S& d) {
        o.add_options()(name.c_str(), po::value<Po>()->default_value(codec.declared(member(at, d))), help);
      };
      r.read = [name, at, codec](const po::variables_map& vm, S& s) {
        member(at, s) = codec.decode(vm[name].as<Po>(), name.c_str());
      };
    }
    return r;
  }

  std::vector<Row> rows_;
  std::vector<std::function<std::string(const S&)>> checks_;
  std::function<bool(const S&)> when_;
};

}  // namespace chaosbench::bench
