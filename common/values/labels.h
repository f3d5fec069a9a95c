// Labels and event fields, one type for every side: the protocol's records, the run
// model and the timeline. A value keeps its JSON flavour: a string, an integer or a real
// number, so "bytes": 16777216 stays a number and 1 never equals "1".
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <variant>

namespace chaosbench::common {

using LabelValue = std::variant<std::string, std::int64_t, double>;
using Labels = std::map<std::string, LabelValue>;

// A label's value as text: a string as it is, an integer in decimal, a real number in
// its shortest round-trip form ("0.5", "1e-07").
std::string label_to_string(const LabelValue& v);

}  // namespace chaosbench::common
