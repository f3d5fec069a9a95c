// One gated row of a baseline comparison (MetricComparison) drawn as inline SVG: the
// baseline's distribution over this run's on one value axis, each as a box plot
// (quartiles, whiskers to the smallest and largest point, the median) with its points as
// a strip of dots spread over the lane, the compared statistic of each side as a diamond,
// and the tolerance band (the baseline's statistic ± tolerance) shaded across both, its
// edge on the regression side drawn dashed: a current diamond beyond that edge is a
// regression beyond the tolerance (a FAIL when the test also finds it significant).
//
// The points are what the gate put in the row (run_model.h): each run's figure (basis
// "runs": filled dots, one per run), or 21 evenly spaced quantiles of the sample tested
// (basis "samples": hollow dots, a quantile strip, not single samples), or one value per
// side (stat "value": one dot, no box). No script: the markup is the plot, deterministic
// (the dots' spread is a fixed sequence), and prints. The <svg> carries its scale
// (data-scale, data-domain, data-x) and each side its box (data-box) so that a test or a
// reader can check any coordinate.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "reports/model/run_model.h"

namespace chaosbench::reports::html {

// The plot's geometry (viewBox units): the value axis runs from kPlotLeft to kPlotRight.
inline constexpr double kPlotWidth = 360, kPlotHeight = 112;
inline constexpr double kPlotLeft = 66, kPlotRight = 350;

struct FiveNumbers {
  double min = 0, q1 = 0, median = 0, q3 = 0, max = 0;
};

// Minimum, quartiles (linear interpolation between order statistics, as NumPy's default)
// and maximum of the finite `points`; nullopt when there is none. Of the 21 quantiles of a
// "samples" row the quartiles are exactly its 25, 50 and 75 % points.
std::optional<FiveNumbers> five_numbers(const std::vector<double>& points);

// The <svg> of one row.
std::string distribution_svg(const MetricComparison& c);

// What the row's dots and diamonds are, in one sentence for the plot's caption: "Dots: each
// run's p50; ◆ the geometric mean over the runs." Not escaped.
std::string distribution_caption(const MetricComparison& c);

}  // namespace chaosbench::reports::html
