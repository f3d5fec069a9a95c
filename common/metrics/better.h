// A metric's better-direction as a type: which way a change of its value is an
// improvement. The catalogue declares it (metric_spec.h); the run model, gates, histories,
// advice and reporters carry and read it; results.json, histories and sweep.json write it
// as to_string says. The one to_string/parse pair of the words.
#pragma once

#include <string_view>

namespace chaosbench::common {

enum class Better {
  kHigher,  // "higher": a rise is an improvement (bandwidth, throughput)
  kLower,   // "lower": a fall is an improvement (times, errors)
  kNone,    // "none": neither way (a count, a setting, a metric outside the catalogue)
  // "": no word, or one this version does not know (a results.json written elsewhere, or
  // by hand). Readers treat it as they always treated such a word: not gated and not
  // latency-like (only kHigher and kLower are), a fall counted as worse (worse_sign), and
  // coloured and summarised as a direction (only kNone is left out there).
  kUnknown,
};

constexpr std::string_view to_string(Better b) {
  switch (b) {
    case Better::kHigher: return "higher";
    case Better::kLower: return "lower";
    case Better::kNone: return "none";
    case Better::kUnknown: return "";
  }
  return "";
}

// The inverse of to_string; any other word (or none) reads as kUnknown.
constexpr Better parse_better(std::string_view word) {
  for (Better b : {Better::kHigher, Better::kLower, Better::kNone})
    if (to_string(b) == word) return b;
  return Better::kUnknown;
}

// +1 when a rise is the worse change (kLower), -1 when a fall is (every other direction:
// the gates compare only kHigher and kLower, and have always read any but "lower" so).
constexpr double worse_sign(Better b) { return b == Better::kLower ? 1.0 : -1.0; }

}  // namespace chaosbench::common
