// One row of the tuning-advice rule table (reports/advice/tuning_advice.cc) and the two values
// its evaluator takes and gives: what the rule sees (the run and its scenario's facts) and
// what it found (the numbers that fired it, and the part of the recommendation computed
// from them). The rules are spread over several files by topic (parallel_advice.h holds
// the hybrid-parallel ones) so that each stays short; the table stays one list.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "reports/model/run_model.h"

namespace chaosbench::reports {

struct AdviceRule {
  struct Context {
    const RunResult& run;
    const ScenarioFacts& scenario;
  };
  struct Finding {
    std::string evidence;  // the values that fired the rule, with units
    std::string detail;    // appended to the rule's fixed recommendation
  };
  using Evaluate = std::optional<Finding> (*)(const Context&, const AdviceRule&);

  std::string_view id;
  std::string_view severity;  // "high", "medium", "low"
  std::string_view title;
  std::string_view reads;  // the metrics it reads
  // What the evaluator compares against (`secondary` where a rule has a second
  // condition); docs/report-formats.md lists them.
  double threshold;
  double secondary;
  Evaluate evaluate;
  std::string_view recommendation;
};

}  // namespace chaosbench::reports
