// The text sections of report.html, each a fragment of escaped HTML that fills one
// placeholder of reports/render/html/report_template.html. Charts are not here: the page's script
// draws them from chart_data_json.
#pragma once

#include <string>

#include "reports/model/run_model.h"

namespace chaosbench::reports::html {

std::string verdict_html(const RunResult& run);      // verdict, reason, failed checks, all checks
std::string faults_html(const RunResult& run);       // what was injected, when and how: the timelines' legend
std::string recovery_html(const RunResult& run);     // goodput/badput, detect/recover, lost steps, checkpoints, events
std::string advice_html(const RunResult& run);       // tuning_advice(run)
std::string environment_html(const RunResult& run);  // host, versions, seed, backends, processes
std::string scenario_text(const RunResult& run);     // the resolved scenario, pretty-printed (not escaped)

}  // namespace chaosbench::reports::html
