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

}  // namespace chaosbench::harness
