// A line chart as inline SVG for pages without scripts (the goodput model's page,
// goodput_page.h): lines of (x, y) points over a linear or logarithmic x axis and a linear
// y axis, with vertical markers (an optimum, the current setting) and a legend. The
// axes use plot_axis.h's scales and ticks. A point outside the y range breaks its line
// there rather than being clamped to the edge. The <svg> carries its scales (data-x-domain,
// data-y-domain) so a test or a reader can recompute any coordinate.
#pragma once

#include <string>
#include <vector>

namespace chaosbench::reports::html {

struct LineChart {
  struct Line {
    std::string name;
    std::string colour;       // a CSS colour
    std::string dash;         // stroke-dasharray, "" for solid
    std::vector<double> x, y;  // the same length; non-finite points are left out

    void add(double px, double py) {
      x.push_back(px);
      y.push_back(py);
    }
  };
  struct Marker {
    double x = 0;
    std::string label;
    std::string colour;
  };

  std::string title;    // the <title>, for screen readers
  std::string x_label, y_label;
  bool log_x = false;
  double y_lo = 0, y_hi = 100;
  std::vector<Line> lines;
  std::vector<Marker> markers;
  // Formats an x tick's value ("1k", "10 min"); plain numbers when empty.
  std::string (*x_tick_text)(double) = nullptr;
  // Where the x ticks go; plot_ticks' 1-2-5 steps when empty.
  std::vector<double> x_ticks = {};
};

// The chart's <svg> (viewBox 640 x 300). Text is escaped.
std::string line_chart_svg(const LineChart& chart);

}  // namespace chaosbench::reports::html
