#include "harness/scenario/placeholders.h"

#include <array>
#include <charconv>
#include <fmt/format.h>
#include <stdexcept>

namespace chaosbench::harness {
namespace {

constexpr std::array<std::string_view, 8> kNames{"rank", "local_rank", "world_size", "node", "master_addr",
                                                 "master_port", "out", "scenario_dir"};

// Calls on_text for literal runs and on_name for placeholders; false on an unclosed brace.
template <class Text, class Name>
bool walk(std::string_view s, Text on_text, Name on_name) {
  std::size_t i = 0;
  while (i < s.size()) {
    if (s.compare(i, 2, "{{") == 0 || s.compare(i, 2, "}}") == 0) {
      on_text(s.substr(i, 1));
      i += 2;
    } else if (s[i] == '{') {
      auto close = s.find('}', i);
      if (close == std::string_view::npos) return false;
      on_name(s.substr(i + 1, close - i - 1));
      i = close + 1;
    } else {
      auto next = s.find_first_of("{}", i + 1);
      if (s[i] == '}') next = i + 1;
      if (next == std::string_view::npos) next = s.size();
      on_text(s.substr(i, next - i));
      i = next;
    }
  }
  return true;
}

constexpr std::string_view kShellSuffix = ":sh";

// "out:sh" -> "out"; other names unchanged.
std::string_view base_name(std::string_view name) {
  return name.ends_with(kShellSuffix) ? name.substr(0, name.size() - kShellSuffix.size()) : name;
}

}  // namespace

std::string shell_quote(std::string_view value) {
  std::string out = "'";
  for (char c : value) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

std::optional<std::string> check_placeholders(std::string_view text, int nodes) {
  // execve and getenv end strings at the first NUL: what ran would not be what was written.
  if (text.find('\0') != std::string_view::npos)
    return std::string("contains a NUL character (\\u0000), which no argument, variable or path can hold");
  std::optional<std::string> error;
  bool closed = walk(
      text, [](std::string_view) {},
      [&](std::string_view full) {
        if (error) return;
        const std::string_view name = base_name(full);
        for (auto n : kNames)
          if (n == name) return;
        if (name.starts_with("node.") && name.ends_with(".addr")) {
          auto idx = name.substr(5, name.size() - 10);
          int v = -1;
          auto [p, ec] = std::from_chars(idx.data(), idx.data() + idx.size(), v);
          if (ec == std::errc() && p == idx.data() + idx.size() && v >= 0 && v < nodes) return;
          error = fmt::format("\"{{{}}}\": the cluster has nodes 0 to {}", name, nodes - 1);
          return;
        }
        error = fmt::format("unknown placeholder \"{{{}}}\" (known: {{rank}} {{local_rank}} {{world_size}} {{node}} "
                            "{{node.N.addr}} {{master_addr}} {{master_port}} {{out}} {{scenario_dir}}; "
                            "add :sh for a shell-quoted value, as in {{out:sh}}; "
                            "write {{{{ and }}}} for literal braces)",
                            full);
      });
  if (!closed) return std::string("a \"{\" is never closed (write {{ for a literal brace)");
  return error;
}

std::string expand_placeholders(std::string_view text, const std::function<std::string(std::string_view)>& lookup) {
  std::string out;
  walk(text, [&](std::string_view t) { out += t; }, [&](std::string_view name) {
    out += name.ends_with(kShellSuffix) ? shell_quote(lookup(base_name(name))) : lookup(name);
  });
  return out;
}

std::string expand_node_addresses(std::string_view text, const std::function<std::string(int node)>& address) {
  return expand_placeholders(text, [&](std::string_view name) {
    int node = -1;
    if (name.size() > 10 && name.starts_with("node.") && name.ends_with(".addr")) {
      std::string_view digits = name.substr(5, name.size() - 10);
      auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), node);
      if (ec != std::errc() || end != digits.data() + digits.size()) node = -1;
    }
    if (node < 0) throw std::runtime_error(fmt::format("no placeholder {{{}}} is known here", name));
    std::string found = address ? address(node) : std::string();
    if (found.empty()) throw std::runtime_error(fmt::format("no address is known for node {}", node));
    return found;
  });
}

}  // namespace chaosbench::harness
