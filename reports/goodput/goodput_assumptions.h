// The goodput model's assumptions in words, for its report: the failure process, what a
// failure loses, the costs' source, the Monte Carlo's size, where the first-order formula
// holds, and what ETTR and goodput count. Every renderer prints the same sentences.
#pragma once

#include <string>
#include <vector>

#include "reports/goodput/goodput_report.h"

namespace chaosbench::reports {

std::vector<std::string> goodput_assumptions(const GoodputReport& report);

// A duration for people: "45 s", "12.5 min", "3.1 h", "264 d" (3 significant digits;
// seconds below 100 s, minutes below 1 h, hours below 48 h).
std::string format_duration_s(double seconds);

}  // namespace chaosbench::reports
