// The goodput model's report as text cells, shared by the console (harness/cli) and the
// HTML page (html/goodput_page.h) so that both show the same numbers the same way: the
// table per node count, the inputs with their provenance, and the run's prediction line.
// Not escaped.
#pragma once

#include <string>
#include <vector>

#include "reports/goodput/goodput_report.h"

namespace chaosbench::reports {

using TextRows = std::vector<std::vector<std::string>>;

// The header first. Columns: N, GPUs, job MTBF; goodput at the current interval (first
// order, Daly exact, Monte Carlo); the optimal interval (Young, Daly, Monte Carlo);
// goodput at the Monte Carlo optimum; ETTR at the current interval; first-order valid?
// ("yes", "no: waste 34%", "no: Weibull"). The run's own N is marked with a star.
TextRows goodput_table_rows(const GoodputReport& report);

// Below each row: why the first-order formula is not valid there ("" when it is).
std::vector<std::string> goodput_table_notes(const GoodputReport& report);

// input, value, provenance, source.
TextRows goodput_input_rows(const GoodputReport& report);

// "measured goodput 71.2% - model 95% prediction interval [63.1%, 78.0%] (median 71.5%) for
// N=4, MTBF 30 s (poisson), measured costs: inside"; "" without a run prediction.
std::string goodput_prediction_text(const GoodputReport& report);

// "measured ETTR 0.731 - model 95% prediction interval [0.702, 0.812]: inside"; "" without
// a run prediction.
std::string goodput_ettr_text(const GoodputReport& report);

// A goodput fraction as "87.3%"; "<0%" below zero (where the first-order formula gives
// nonsense: JSON keeps the number); "-" when not finite.
std::string format_goodput(double fraction);

}  // namespace chaosbench::reports
