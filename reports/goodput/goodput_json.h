// `chaosbench model goodput --json` (docs/goodput-model.md "JSON"): the whole report as
// one object with stable keys, goodputs in percent (keys ending _pct), ETTR as a ratio,
// times in seconds (keys ending _s), numbers that are not finite and values that do not
// apply as null. Pure.
#pragma once

#include <nlohmann/json_fwd.hpp>

#include "reports/goodput/goodput_report.h"

namespace chaosbench::reports {

inline constexpr int kGoodputJsonSchema = 1;

nlohmann::ordered_json goodput_json(const GoodputReport& report);

}  // namespace chaosbench::reports
