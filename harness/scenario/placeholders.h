// Placeholders in a command workload's argv, env and cwd: "{rank}", "{node.1.addr}",
// "{master_port}"... Checked when the scenario is parsed, expanded per rank at launch.
// "{{" and "}}" stand for literal braces.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <string_view>

namespace chaosbench::harness {

// Why `text` has a bad placeholder (unknown name, node index >= nodes, unclosed brace) or
// a NUL character, or nullopt when every placeholder is known.
std::optional<std::string> check_placeholders(std::string_view text, int nodes);

// Replaces each placeholder by lookup(name), verbatim; "{name:sh}" by shell_quote of it,
// for strings handed to `sh -c`. Names were checked before.
// `value` in single quotes, each ' written '\'': one word to any POSIX shell.
std::string shell_quote(std::string_view value);

std::string expand_placeholders(std::string_view text, const std::function<std::string(std::string_view)>& lookup);

// Text that may hold only {node.N.addr} (probe and scrape URLs, a probe's argv): each
// replaced by address(N). Throws std::runtime_error for any other placeholder (a spec
// made by hand, not by the parser) or a node without a known address.
std::string expand_node_addresses(std::string_view text, const std::function<std::string(int node)>& address);

}  // namespace chaosbench::harness
