// The status of one check (a scenario's "checks" entry against the run's metrics) as a
// type; results.json writes it as "pass" or "fail".
#pragma once

#include <string_view>

namespace chaosbench::reports {

enum class CheckStatus {
  kPass,  // "pass": the worst matching record is within the threshold
  kFail,  // "fail": it is not, or no record matched
};

constexpr std::string_view to_string(CheckStatus s) { return s == CheckStatus::kPass ? "pass" : "fail"; }

// The inverse of to_string; anything but "pass" is a failed check, as reporters have
// always read it.
constexpr CheckStatus parse_check_status(std::string_view word) {
  return word == "pass" ? CheckStatus::kPass : CheckStatus::kFail;
}

}  // namespace chaosbench::reports
